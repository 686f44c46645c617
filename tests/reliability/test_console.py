"""Entry points are quiet by default and show everything with --verbose (bert_keras/console.py).

One real script that imports TensorFlow (its native startup lines) and fails on bad input, quiet
and --verbose; and, without TensorFlow (cheap), a driver on the same flag contract that writes
each kind of line the console leaves out or keeps, then ends with a user error, a bug or a crash.
"""

import os
import subprocess
import sys

import pytest

from bert_keras import console
from tests.reliability import bad_inputs as B

# Lines measured on a CPU host (TensorFlow 2.21), as its C++ writes them to fd 2.
NATIVE = (
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
    "I0000 00:00:1795825133.418160    1294 cudart_stub.cc:31] Could not find cuda drivers on your "
    "machine, GPU will not be used.\n"
    "I0000 00:00:1795825133.567201    1294 cpu_feature_guard.cc:227] This TensorFlow binary is "
    "optimized to use available CPU instructions in performance-critical operations.\n"
    "To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with "
    "the appropriate compiler flags.\n"
    "E0000 00:00:1795825137.329215    1294 cuda_platform.cc:52] failed call to cuInit: INTERNAL: "
    "CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\n"
    "INFO:apache_beam.runners.worker.sdk_worker:Control channel established.\n")

_DRIVER = """
import logging, os, sys, warnings
import importlib.util
from absl import app, logging as absl_logging
from bert_keras.errors import UserError, parse_flags, run_main

def main(argv):
  os.write(2, {native!r}.encode())
  print("kept: our print", file=sys.stderr)
  warnings.warn("Gradients do not exist for variables ['pooler/dense/kernel', 'pooler/dense/bias']"
                " when minimizing the loss. If using `model.compile()`, ...")
  warnings.warn("Gradients do not exist for variables ['pooler/dense/kernel', 'head/kernel']"
                " when minimizing the loss. kept")
  logging.getLogger("tensorflow").info("tensorflow info")
  logging.getLogger("tensorflow").warning("kept: tensorflow warning")
  keras_file = os.path.join(importlib.util.find_spec("keras").submodule_search_locations[0], "x.py")
  absl = logging.getLogger("absl")
  absl.handle(absl.makeRecord("absl", logging.INFO, keras_file, 1, "keras info", (), None))
  absl_logging.info("kept: our progress line")
  sys.stderr.write("kept: a line without its end, then ")
  sys.stderr.flush()
  os.write(2, b"E0000 00:00:1.0 1 x.cc:1] kept: a native error\\n")
  if argv[1] == "user_error":
    raise UserError("kept: bad value")
  if argv[1] == "bug":
    {{}}["kept: a bug"]
  os.write(2, b"F0000 00:00:1.0 1 x.cc:1] kept: a native fatal error\\n")
  os.abort()

app.run(run_main(main), flags_parser=parse_flags)
"""


# Runs a script as __main__ and says, last, whether it imported TensorFlow.
_PROBE = ("import atexit, runpy, sys; atexit.register(lambda: print('imported tensorflow:', "
          "'tensorflow' in sys.modules, file=sys.stderr)); sys.argv = sys.argv[1:]; "
          "runpy.run_path(sys.argv[0], run_name='__main__')")


def _run(*args, script=None, timeout=60):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONPATH=B.ROOT)
  command = [sys.executable, "-c", _DRIVER.format(native=NATIVE)] if script is None else [
      sys.executable, "-c", _PROBE, B.script_path(script)]
  return subprocess.run(command + list(args), cwd=B.ROOT, env=env, capture_output=True, text=True,
                        timeout=timeout)


def _kept(stderr):
  return [line for line in stderr.splitlines() if "kept" in line]


# In this order, each on its own line (the line without its end is forwarded as written).
KEPT = ["kept: our print", "head/kernel", "kept: tensorflow warning", "kept: our progress line",
        "kept: a line without its end, then E0000 00:00:1.0 1 x.cc:1] kept: a native error"]


@pytest.mark.parametrize("ending,status,last", [
    ("user_error", 2, "error: kept: bad value"),
    ("bug", 1, "KeyError: 'kept: a bug'"),
    ("crash", -6, "F0000 00:00:1.0 1 x.cc:1] kept: a native fatal error")])
def test_quiet_leaves_out_only_the_noise_in_order(ending, status, last):
  run = _run(ending)
  assert run.returncode == status, run.stderr
  lines = run.stderr.splitlines()
  assert _kept(run.stderr)[-1] == last, run.stderr  # after a crash, the faulthandler's trace too
  if ending == "user_error":
    assert lines[-1] == last, run.stderr
  assert not [line for line in lines if console.is_noise(line.encode())], run.stderr
  assert "pooler/dense/bias" not in run.stderr and " info" not in run.stderr, run.stderr
  assert "UserWarning: Gradients do not exist for variables ['pooler/dense/kernel', 'head/kernel']" \
      in run.stderr
  kept = _kept(run.stderr)
  assert len(kept) > len(KEPT), kept
  for expected, line in zip(KEPT, kept):
    assert expected in line, (expected, kept)
  if ending == "bug":
    assert "Traceback" in run.stderr and "error:" not in run.stderr


def test_verbose_shows_it_all():
  run = _run("--verbose", "user_error")
  assert run.returncode == 2 and run.stderr.splitlines()[-1] == "error: kept: bad value", run.stderr
  assert NATIVE in run.stderr, run.stderr
  for line in ("pooler/dense/bias", "tensorflow info", "keras info"):
    assert line in run.stderr, (line, run.stderr)


def test_the_noise_is_only_the_known_lines():
  assert all(console.is_noise(line.encode()) for line in NATIVE.splitlines())
  assert console.is_noise(b"INFO:tensorflow:Assets written to: /tmp/x/assets")
  assert console.is_noise(b"INFO:__main__:Python sdk harness starting.")  # a Beam worker
  for line in ("error: --task: missing", "Traceback (most recent call last):",
               "E0000 00:00:1.0 1 cuda_platform.cc:52] out of memory",
               "I1128 00:21:14.179401 140439514307456 finetuning.py:383] polarity dev: {}",
               "WARNING:root:something else", "INFO but not a log line",
               "INFO:root:a user's own log line", "INFO:my_app.serving:loaded",
               "INFO:tensorflower:not a framework logger", "INFO:__main__:a user's script"):
    assert not console.is_noise(line.encode()), line


# A real entry point that imports TensorFlow (which lists the devices) and then refuses the
# command (a random-init model without a vocabulary, told once the model config is resolved): its
# error is the only line, with exit status 2.
_BAD_MODEL = ("--task=polarity", "--model=bert_tiny", "--output_dir=/nonexistent/never_written")


def _script_lines(run):
  """stderr's lines but the probe's last one, which must say TensorFlow was imported."""
  lines = run.stderr.splitlines()
  assert lines and lines[-1] == "imported tensorflow: True", run.stderr[-3000:]
  assert run.returncode == 2, run.stderr[-3000:]
  return lines[:-1]


def test_a_tensorflow_entry_point_prints_only_its_error_line():
  run = _run(*_BAD_MODEL, script="run_finetuning", timeout=240)
  lines = _script_lines(run)
  assert len(lines) == 1 and lines[0].startswith("error: --vocab_file is needed"), lines


def test_a_tensorflow_entry_point_with_verbose_shows_the_native_lines():
  run = _run("--verbose", *_BAD_MODEL, script="run_finetuning", timeout=240)
  lines = _script_lines(run)
  assert lines[-1].startswith("error: --vocab_file is needed"), lines
  if not [line for line in lines if console.is_noise(line.encode())]:
    pytest.skip("this host's TensorFlow printed none of the known native lines")
