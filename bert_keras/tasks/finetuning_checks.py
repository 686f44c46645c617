"""The checks of a run_finetuning command before TensorFlow is imported (output directory, input
paths, an earlier run's task): a wrong command fails in about a second."""

from __future__ import annotations

import json
import os
import re

from bert_keras.atomic_io import check_output_dir
from bert_keras.configs.finetuning import RunConfig
from bert_keras.configs.model import GPT_PRESETS, MODEL_PRESETS
from bert_keras.errors import UserError
from bert_keras.input_checks import (check_reachable, check_readable_dir, check_readable_file,
                                     is_remote)
from bert_keras.output_task import check_earlier_task
from bert_keras.tasks.data_files import DATA_FILES

# What every run (train, evaluate, predict) writes and records its task in: {"task": {"task": ..}}.
RUN_CONFIG = "config.json"
_FILE_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)+")


def check_output_task(output_dir: str, task: str) -> None:
  """The exporter's rule (bert_keras/output_task.py): a run into a directory holding another
  task's run is refused; its files (SQuAD's predictions.json) would pass for this run's."""
  path = os.path.join(output_dir, RUN_CONFIG)
  if is_remote(output_dir) or not os.path.isfile(path):
    return
  try:
    with open(path, encoding="utf-8") as f:
      earlier = json.load(f).get("task", {}).get("task")
  except (OSError, ValueError, AttributeError):
    earlier = None
  check_earlier_task(f"--output_dir={output_dir}", "a fine-tuning run",
                     earlier if isinstance(earlier, str) else None, task)


def task_files(task: str) -> list[str]:
  """The file names the task's readers look for in --data_dir (data_files.DATA_FILES)."""
  task = task.removeprefix("gpt/")  # GPT-1 reads the data of the task it is built on
  return [name for name in _FILE_NAME.findall(DATA_FILES.get(task, ""))
          if not name.startswith("tensorflow")]


def check_data_dir(data_dir: str, task: str, need_files: bool) -> None:
  """--data_dir: '' (the embedded data) and 'tfds:...' are the task's to resolve; a folder must
  exist and be readable, and so must each of the task's files in it; `need_files`: at least one
  of them must be there (a wrong folder fails now, not after TensorFlow has loaded)."""
  if not data_dir or data_dir.startswith("tfds:"):
    return
  check_readable_dir(data_dir, "data_dir", "data directory")
  if is_remote(data_dir):
    return
  names = task_files(task)
  present = [name for name in names if os.path.lexists(os.path.join(data_dir, name))]
  for name in present:
    check_readable_file(os.path.join(data_dir, name), "", f"{task} data file")
  if need_files and names and not present:
    raise UserError(f"--data_dir={data_dir} holds none of the {task} files ({', '.join(names)})")


def check_checkpoint(path: str, flag: str) -> None:
  """A checkpoint path: a file, a directory or a TF checkpoint prefix (`<path>.index`)."""
  if is_remote(path):
    check_reachable(path, flag)
    return
  if os.path.isfile(path + ".index"):
    return
  if not os.path.exists(path):
    raise UserError(f"--{flag}={path}: no such checkpoint file or directory")
  if os.path.isdir(path):
    check_readable_dir(path, flag, "checkpoint directory")
  else:
    check_readable_file(path, flag, "checkpoint file")


def unknown_model_config(spec: str) -> UserError:
  return UserError(f"--model={spec!r} is neither a preset {sorted(MODEL_PRESETS)}, a "
                   "ModelConfig JSON file nor a checkpoint")


def check_training_command(task: str, run: RunConfig) -> None:
  """--mode=train: everything about the paths that can be told before TensorFlow loads."""
  if not run.output_dir:
    raise UserError("--output_dir is required")
  check_output_dir(run.output_dir)
  check_output_task(run.output_dir, task)
  check_reachable(run.output_dir, "output_dir")
  check_data_dir(run.data_dir, task, need_files=True)
  if run.init_checkpoint:
    check_checkpoint(run.init_checkpoint, "init_checkpoint")
  elif run.model and run.model not in {**MODEL_PRESETS, **GPT_PRESETS}:
    spec = run.model
    if not (is_remote(spec) or os.path.exists(spec) or os.path.exists(spec + ".index")):
      raise unknown_model_config(spec)
    check_checkpoint(spec, "model")
  if run.vocab_file:
    check_readable_file(run.vocab_file, "vocab_file", "vocabulary file")


def check_reuse_command(finetuned_dir: str, output_dir: str, data_dir: str) -> str:
  """--mode=evaluate/predict: the fine-tuned directory's task (its task_info.json), after checking
  the paths; the task of an earlier run in output_dir must be the same."""
  check_readable_dir(finetuned_dir, "finetuned_dir", "fine-tuned run directory")
  info = os.path.join(finetuned_dir, "task_info.json")
  check_readable_file(info, "", "task_info.json (a run_finetuning output)")
  try:
    with open(info, encoding="utf-8") as f:
      task = json.load(f).get("task")
  except (ValueError, AttributeError):
    task = None
  if not isinstance(task, str):
    raise UserError(f"{info}: no task recorded; expected the task_info.json of run_finetuning")
  check_output_dir(output_dir)
  check_output_task(output_dir, task)
  check_data_dir(data_dir, task, need_files=True)
  return task
