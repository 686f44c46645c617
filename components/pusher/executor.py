"""Pusher executor: versioned, atomic copies into a TF-Serving-style model directory."""

from __future__ import annotations

import os
import re
import shutil

from bert_keras.errors import UserError
from bert_keras.safety import safe_join, safe_name
from bert_keras.orchestration.base_executor import BaseExecutor

_VERSION = re.compile(r"^\d+$")


def next_version(model_dir: str) -> int:
  """1 + the largest integer version directory under `model_dir` (1 when there is none)."""
  if not os.path.isdir(model_dir):
    return 1
  versions = [int(d) for d in os.listdir(model_dir) if _VERSION.match(d)]
  return max(versions, default=0) + 1


def push(source_dir: str, model_dir: str) -> str:
  """Copies `source_dir` to `model_dir/<next version>` atomically; returns the version's path.

  TF Serving polls the model directory and loads the highest version: it must never see a
  half-copied one, so the copy goes to a hidden temporary name in the same directory first.
  """
  os.makedirs(model_dir, exist_ok=True)
  version = next_version(model_dir)
  tmp = os.path.join(model_dir, f".tmp-{version}-{os.getpid()}")
  shutil.rmtree(tmp, ignore_errors=True)
  shutil.copytree(source_dir, tmp, ignore=shutil.ignore_patterns("artifact.json"))
  final = os.path.join(model_dir, str(version))
  os.rename(tmp, final)
  return final


class PusherExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    saved_model, blessing = inputs["saved_model"], inputs["blessing"]
    pushed = outputs["pushed_model"]
    model_name = (parameters["model_name"] or saved_model.properties.get("task", "")
                  or blessing.properties.get("task", ""))
    if not model_name:
      raise UserError(f"{saved_model.uri}: no task recorded; set the pusher's model_name")
    model_name = safe_name(model_name.replace("/", "_"), "model_name")
    if not blessing.properties.get("blessed", False):
      reasons = blessing.properties.get("failed_checks", [])
      self.log(f"not pushing {model_name}: model is not blessed ({'; '.join(reasons)})")
      pushed.properties.update(pushed=False, reason="not blessed", failed_checks=reasons)
      pushed.metrics["pushed"] = 0
      return
    source = saved_model.path(saved_model.properties.get("saved_model_dir", ""))
    destination = push(source, safe_join(parameters["serving_dir"], model_name, "model_name"))
    only_litert = "saved_model" not in saved_model.properties.get("formats", ["saved_model"])
    self.log(f"pushed {model_name} to {destination}"
             + (" (model.tflite only: no SavedModel for TF Serving)" if only_litert else ""))
    pushed.properties.update(pushed=True, pushed_destination=os.path.abspath(destination),
                             pushed_version=int(os.path.basename(destination)),
                             model_name=model_name)
    pushed.metrics.update(pushed=1, version=int(os.path.basename(destination)))
