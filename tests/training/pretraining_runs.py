"""Test helper: runs scripts/run_pretraining.py as a subprocess on a tiny model and reads results."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "run_pretraining.py")
TINY_MODEL = dict(vocab_size=128, num_layers=2, hidden_size=32, num_heads=2, intermediate_size=64,
                  max_position_embeddings=64)


def tiny_flags(pattern: str, model_dir: str, steps: int, dropout: float = 0.1,
               num_layers: int = TINY_MODEL["num_layers"],
               vocab_size: int = TINY_MODEL["vocab_size"], **extra) -> list:
  """The run_pretraining.py command line of a tiny run (`extra`: more flags). `vocab_size`: the
  model's and dynamic masking's (30522 for records of the real uncased vocabulary)."""
  model = dict(TINY_MODEL, num_layers=num_layers, dropout_rate=dropout,
               attention_dropout_rate=dropout, vocab_size=vocab_size)
  values = dict(model="bert_tiny", model_overrides=json.dumps(model), input_files=pattern,
                max_seq_length=32, max_predictions_per_seq=5, train_batch_size=8,
                num_train_steps=steps, num_warmup_steps=2, learning_rate=1e-3, log_every=1,
                checkpoint_every=2, deterministic=True, shuffle_buffer_size=50,
                vocab_size=vocab_size, output_dir=model_dir)
  values.update(extra)
  flags = []
  for k, v in values.items():
    if isinstance(v, bool):
      flags.append(f"--{k}" if v else f"--no{k}")
    else:
      flags.append(f"--{k}={v}")
  return [sys.executable, SCRIPT] + flags


def env(tf_config: dict | None = None) -> dict:
  e = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT, CUDA_VISIBLE_DEVICES="")
  e.pop("TF_CONFIG", None)
  if tf_config is not None:
    e["TF_CONFIG"] = json.dumps(tf_config)
  return e


def free_ports(n: int) -> list:
  socks = [socket.socket() for _ in range(n)]
  for s in socks:
    s.bind(("127.0.0.1", 0))
  ports = [s.getsockname()[1] for s in socks]
  for s in socks:
    s.close()
  return ports


def cluster(ports: list, index: int) -> dict:
  return {"cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
          "task": {"type": "worker", "index": index}}


def read_checkpoint(directory: str) -> dict:
  """Every model/optimizer/step tensor of the latest checkpoint in `directory` (not save_counter)."""
  prefix = tf.train.latest_checkpoint(directory)
  assert prefix, f"no checkpoint in {directory}: {os.listdir(directory)}"
  reader = tf.train.load_checkpoint(prefix)
  return {name: reader.get_tensor(name) for name, _ in tf.train.list_variables(prefix)
          if not name.startswith(("save_counter", "_CHECKPOINTABLE"))}


def max_difference(a: dict, b: dict) -> float:
  assert sorted(a) == sorted(b)
  return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64))))
             for k in a)


def train_losses(model_dir: str) -> dict:
  """{step: loss} of the train rows in history.jsonl."""
  rows = [json.loads(l) for l in open(os.path.join(model_dir, "history.jsonl"), encoding="utf-8")]
  return {r["step"]: r["loss"] for r in rows if r["split"] == "train"}


def run(cmd: list, tf_config: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
  done = subprocess.run(cmd, env=env(tf_config), capture_output=True, text=True, timeout=timeout)
  assert done.returncode == 0, done.stderr[-3000:]
  return done
