"""Shared helpers of the reliability tests: write bad input files, run a script, check a user error.

A user error (bert_keras.errors.UserError) must reach the user as ONE line on stderr starting with
"error:", naming the file, line or value, with exit status 2 and no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
# The ablation study's script (studies/, outside the library), run like the scripts.
ABLATION = "studies/bert_gpt_ablation/run_ablation"

# Small WordPiece vocabulary with the BERT special tokens (ids 0-4) and some words.
VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
         + "the a film good bad was it is of and to in ##s ##ed ##ing".split())
GLUE_HEADER_MRPC = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"
SWAG_HEADER = ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label"


def write(path: str, data) -> str:
  """Writes str (UTF-8) or bytes to `path` (parents created); returns the path."""
  os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
  with open(path, "wb") as f:
    f.write(data.encode("utf-8") if isinstance(data, str) else data)
  return path


def write_vocab(directory: str, tokens=VOCAB) -> str:
  return write(os.path.join(directory, "vocab.txt"), "\n".join(tokens) + "\n")


def write_model_config(path: str, **overrides) -> str:
  """A tiny ModelConfig JSON (bert_tiny with 1 layer, H=16) for random-init runs."""
  values = dict(vocab_size=len(VOCAB), hidden_size=16, num_layers=1, num_heads=2,
                intermediate_size=32, hidden_act="gelu", dropout_rate=0.1,
                attention_dropout_rate=0.1, max_position_embeddings=64, type_vocab_size=2,
                initializer_range=0.02, layer_norm_epsilon=1e-12, attention="bidirectional")
  values.update(overrides)
  return write(path, json.dumps(values))


def mrpc_rows(labels) -> str:
  rows = [GLUE_HEADER_MRPC]
  for i, label in enumerate(labels):
    rows.append(f"{label}\t{i}\t{i + 100}\tthe film was good\tit was bad")
  return "\n".join(rows) + "\n"


def swag_rows(n: int = 2) -> str:
  rows = [SWAG_HEADER]
  for i in range(n):
    rows.append(f"{i},v{i},{i},the film,The film,was,gold,good.,bad.,it.,a.,{i % 4}")
  return "\n".join(rows) + "\n"


def squad_json(context: str = "the film was good", answer: str = "good") -> str:
  start = context.index(answer)
  return json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": [{
      "context": context, "qas": [{"id": "q1", "question": "how was it?",
                                   "answers": [{"text": answer, "answer_start": start}]}]}]}]})


def conll_rows(tags) -> str:
  words = ["the", "film", "was", "good", "in", "a", "film"]
  lines = ["-DOCSTART- -X- -X- O", ""]
  for i, tag in enumerate(tags):
    lines.append(f"{words[i % len(words)]} NN B-NP {tag}")
  return "\n".join(lines) + "\n\n"


def script_path(name: str) -> str:
  """scripts/<name>.py; a `name` with a slash is a path from the repository root (a study's
  script: "studies/bert_gpt_ablation/run_ablation")."""
  return os.path.join(ROOT if "/" in name else SCRIPTS, f"{name}.py")


def run_script(name: str, *args: str, timeout: float = 240,
               without_gcp_extras: bool = False) -> subprocess.CompletedProcess:
  """Runs script_path(name) with `args` in a fresh interpreter (TF logs quiet, no GPU), as
  without Beam's GCP extras if asked (`hide_gcp_extras`)."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
             PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  command = [script_path(name), *args]
  if without_gcp_extras:
    command = hide_gcp_extras(command)
  return subprocess.run([sys.executable, *command], cwd=ROOT, env=env, capture_output=True,
                        text=True, timeout=timeout)


def hide_gcp_extras(command: list) -> list:
  """python's arguments that run `command` (a script's path or "-m", a module, then the arguments)
  as without Beam's GCP extras, installed or not: the Dataflow client's import fails. A test of
  the refusal of --runner=DataflowRunner then runs either way, and never submits a job."""
  from bert_keras.beam_runner import DATAFLOW_CLIENT_MODULE  # pylint: disable=g-import-not-at-top

  module = command[0] == "-m"
  target = command[1] if module else command[0]
  run = (f"runpy.run_module({target!r}, run_name='__main__', alter_sys=True)" if module
         else f"sys.argv[0] = {target!r}; runpy.run_path({target!r}, run_name='__main__')")
  return ["-c", f"import runpy, sys; sys.modules[{DATAFLOW_CLIENT_MODULE!r}] = None; {run}",
          *command[2 if module else 1:]]


def raises(fn, *needles: str) -> str:
  """Asserts `fn()` raises a one-line UserError containing every needle; returns the message."""
  import pytest  # pylint: disable=g-import-not-at-top

  from bert_keras.errors import UserError  # pylint: disable=g-import-not-at-top

  with pytest.raises(UserError) as info:
    fn()
  message = str(info.value)
  assert "\n" not in message.strip(), f"multi-line error: {message!r}"
  for needle in needles:
    assert needle in message, f"{needle!r} not in {message!r}"
  return message


def reads_or_user_error(fn):
  """Runs `fn`; a UserError must be one line (then None). Any other exception fails the test."""
  from bert_keras.errors import UserError  # pylint: disable=g-import-not-at-top

  try:
    return fn()
  except UserError as e:
    message = str(e)
    assert message.strip() and "\n" not in message.strip(), repr(message)
    return None


def with_file(name: str, data: bytes, fn):
  """`fn(directory, path)` with `data` written to `path` = <a fresh temporary directory>/`name`."""
  import tempfile  # pylint: disable=g-import-not-at-top

  with tempfile.TemporaryDirectory() as directory:
    return fn(directory, write(os.path.join(directory, name), data))


def fuzz_settings(max_examples: int = 60, more_health_checks=()):
  """The fuzz tests' hypothesis settings: reproducible (derandomize), no deadline, big inputs allowed."""
  from hypothesis import HealthCheck, settings  # pylint: disable=g-import-not-at-top

  return settings(max_examples=max_examples, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         *more_health_checks])


def user_error_line(result: subprocess.CompletedProcess, *needles: str) -> str:
  """Asserts the user-error contract on a finished script and returns its error line.

  Exit status 2, no traceback anywhere on stderr, the last stderr line starts with "error: " and
  contains every needle (a file name, a line number, a value, what was expected).
  """
  stderr = result.stderr.strip()
  detail = f"exit {result.returncode}; stderr tail:\n{stderr[-3000:]}"
  assert result.returncode == 2, detail
  assert "Traceback" not in stderr, detail
  last = stderr.splitlines()[-1] if stderr else ""
  assert last.startswith("error: "), detail
  for needle in needles:
    assert needle in last, f"{needle!r} not in the error line {last!r}"
  return last
