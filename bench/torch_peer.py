"""The Hugging Face torch peer of the serving benchmarks (bench_serving.py, bench_serving_real.py):
its virtualenv and the child process that times it.

torch and TensorFlow never share a process: the peer runs a benchmark's own script (model, inputs,
a warm-up, then one JSON line per request) in the python of bench/.venvs/torch, so each library
keeps its default threading and neither's libraries shadow the other's. No flags here: the scripts
that import this module define theirs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

DEFAULT_VENV = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venvs", "torch")


def ensure_torch_venv(path: str = DEFAULT_VENV) -> str:
  """The venv's python, creating it with the CPU torch 2.13.0 + transformers when missing."""
  python = os.path.join(path, "bin", "python")
  check = [python, "-c", "import torch, transformers"]
  if os.path.exists(python) and subprocess.run(check, capture_output=True).returncode == 0:
    return python
  subprocess.run([sys.executable, "-m", "venv", path], check=True)
  # Plain `torch` would pull a multi-GB CUDA build; 2.13.0 resolves to the CPU one here.
  subprocess.run([python, "-m", "pip", "install", "-q", "torch==2.13.0", "transformers"],
                 check=True)
  return python


# The child's side, run before a benchmark's script: `spec`, `bert_model()`, `outputs()`, `serve()`.
CHILD_COMMON = r"""
import json, sys, time
import torch
from transformers import BertConfig, BertModel

spec = json.loads(sys.argv[1])
torch.manual_seed(0)  # torch's default threading, as a user gets it

def bert_model():
  # spec["model_dir"]: a Hugging Face checkpoint; else random weights of the spec's shape.
  if spec.get("model_dir"):
    return BertModel.from_pretrained(spec["model_dir"]).eval()
  return BertModel(BertConfig(
      vocab_size=spec["vocab_size"], hidden_size=spec["hidden_size"],
      num_hidden_layers=spec["num_layers"], num_attention_heads=spec["num_heads"],
      intermediate_size=spec["intermediate_size"], hidden_act="gelu",
      max_position_embeddings=512, type_vocab_size=2)).eval()

def outputs(out):
  # The encoder export's outputs (pooled, sequence, every layer's) as numpy arrays, which view
  # the tensors' buffers as np.asarray does for TF: the same work asked of the SavedModel rows.
  return [t.numpy() for t in (out.pooler_output, out.last_hidden_state, *out.hidden_states[1:])]

def serve(info, call, argument):
  # A small server: prints `info` (the model is warm), then answers each stdin line
  # "<key> <runs>" with the wall and CPU seconds of `runs` calls call(argument(key)), one JSON
  # line each; the parent sends them between its own TF rounds, so load hits both alike.
  print(json.dumps(info), flush=True)
  for line in sys.stdin:
    key, runs = line.split()
    times, cpu = [], []
    for _ in range(int(runs)):
      x = argument(key)
      start, start_cpu = time.perf_counter(), time.process_time()
      call(x)
      times.append(time.perf_counter() - start)
      cpu.append(time.process_time() - start_cpu)
    print(json.dumps({"times": times, "cpu": cpu}), flush=True)
"""


class TorchServer:
  """CHILD_COMMON + `script` run by the torch venv's `python`, the JSON of `spec` its argument.

  The script builds its model and inputs, warms up, then calls `serve(info, call, argument)`:
  `info` (torch version, threads, whatever it reports) is kept here, and each `timer(key)(runs)`
  times `runs` calls in the child.
  """

  def __init__(self, python: str, script: str, spec: dict):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    self._process = subprocess.Popen([python, "-c", CHILD_COMMON + script, json.dumps(spec)],
                                     env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    self.info = self._read()

  def _read(self) -> dict:
    line = self._process.stdout.readline()
    if not line:
      raise RuntimeError(f"the torch process ended (exit code {self._process.wait()})")
    return json.loads(line)

  def timer(self, key: str):
    """timer(runs) -> (wall seconds, CPU seconds) of `runs` calls of `key`, timed in the child."""
    def timer(runs: int):
      if not runs:
        return [], []
      self._process.stdin.write(f"{key} {runs}\n")
      self._process.stdin.flush()
      result = self._read()
      return result["times"], result["cpu"]
    return timer

  def close(self):
    self._process.stdin.close()
    self._process.wait()
