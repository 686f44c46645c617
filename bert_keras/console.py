"""What an entry point leaves out of its console unless `--verbose`: lines that tell a user nothing
(measured: five native CUDA/absl lines per TensorFlow import, 4 KB of INFO per export, 17 KB of
Beam worker INFO per create_pretraining_data run, an expected pooler-gradient warning). `quiet()` is
called by the flag contract (errors.py) of every entry point; importing bert_keras changes nothing.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings

VERBOSE_HELP = ("Show everything TensorFlow and Beam print (native log lines, INFO logs, expected "
                "warnings); by default they are left out.")

# TF_CPP_MIN_LOG_LEVEL unless the user set one: no native INFO lines, warnings and errors kept.
NATIVE_LOG_LEVEL = "1"

# Packages whose INFO log lines are internal detail, logged through their own loggers or absl's.
FRAMEWORKS = ("tensorflow", "keras", "apache_beam")

# Keras warns for variables without a gradient; the pooler's have none in span and token tasks.
POOLER_WITHOUT_GRADIENTS = (r"Gradients do not exist for variables "
                            r"\[(?:'(?:[^'/]+/)*pooler/[^']+'(?:, )?)+\] when minimizing")

# A native (absl / glog) log line's prefix: `I0000 00:00:1795825133.418160    1294 `.
_NATIVE = rb"[IWEF]\d{4} [\d:.]+ +\d+ "
# Whole lines from their start: TensorFlow's C++ and Beam's workers write these to fd 2 directly.
NOISE = re.compile(rb"(?:" + rb"|".join([
    rb"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR",
    _NATIVE + rb"cudart_stub\.cc:\d+\] Could not find cuda drivers on your machine, GPU will not be used\.",
    _NATIVE + rb"cuda_(?:platform|executor|diagnostics)\.cc:\d+\] (?:failed call to cuInit"
              rb"|retrieving CUDA diagnostic information|hostname:|no NVIDIA GPU device)",
    _NATIVE + rb"cpu_feature_guard\.cc:\d+\] This TensorFlow binary is optimized to use",
    rb"To enable the following instructions: [\w .,]+ in other operations, rebuild TensorFlow",
    _NATIVE + rb"port\.cc:\d+\] oneDNN custom operations are on\.",
    _NATIVE + rb"cuda_(?:dnn|fft|blas)\.cc:\d+\] Unable to register cu\w+ factory",
    _NATIVE + rb"py_utils\.cc:\d+\] TF-TRT Warning: Could not find TensorRT",
    rb"INFO:(?:tensorflow|keras|apache_beam)(?:\.[\w.]+)?:",  # FRAMEWORKS' loggers only
    # A Beam worker process (sdk_worker_main, run as __main__) starting and exiting.
    rb"INFO:__main__:(?:Logging handler created\.|semi_persistent_directory: |Pipeline_options: "
    rb"|Python sdk harness (?:starting|exiting)\.)",
    rb"(?:WARNING:root:|W[\d:. ]+__init__\.py:\d+\] )apitools not found, and bigquery client",
    rb"(?:WARNING:[\w.]+:|W[\d:. ]+local_job_service\.py:\d+\] Worker: severity: WARN .*)"
    rb"No semi_persistent_directory found",
]) + rb")")


def is_noise(line: bytes) -> bool:
  return NOISE.match(line) is not None


def quiet() -> None:
  """Leaves the noise out of this process's console and its children's; once, from an entry
  point, before TensorFlow or Beam is imported."""
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", NATIVE_LOG_LEVEL)
  for name in FRAMEWORKS:
    logging.getLogger(name).setLevel(logging.WARNING)
  logging.getLogger("absl").addFilter(_FrameworkInfo(FRAMEWORKS))
  warnings.filterwarnings("ignore", message=POOLER_WITHOUT_GRADIENTS, category=UserWarning)
  if os.name == "posix":
    _filter_stderr()


class _FrameworkInfo(logging.Filter):
  """Drops records below WARNING logged from the source files of `packages` (not imported)."""

  def __init__(self, packages):
    super().__init__()
    import importlib.util  # pylint: disable=import-outside-toplevel
    specs = [importlib.util.find_spec(name) for name in packages]
    self.dirs = tuple(os.path.join(location, "") for spec in specs if spec is not None
                      for location in spec.submodule_search_locations or ())

  def filter(self, record):
    return record.levelno >= logging.WARNING or not record.pathname.startswith(self.dirs)


def _filter_stderr() -> None:
  """Points fd 2 at a pipe read by a process (not a thread: a crash's last words and child
  processes' lines still arrive) that forwards every line but NOISE to the real stderr."""
  import atexit  # pylint: disable=import-outside-toplevel
  import subprocess  # pylint: disable=import-outside-toplevel

  sys.stderr.flush()
  read_end, write_end = os.pipe()
  real_stderr = os.dup(2)
  try:
    # -I -S: the standard library only, whatever PYTHONPATH holds; started in a few ms.
    forwarder = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__)],
                                 stdin=read_end, stdout=real_stderr, stderr=real_stderr)
  except OSError:
    for fd in (read_end, write_end, real_stderr):
      os.close(fd)
    return  # the console stays as it is
  os.close(read_end)
  os.dup2(write_end, 2)
  os.close(write_end)

  def restore():
    # After the hooks registered later (TensorFlow's, Beam's); the forwarder stops at the pipe's end.
    sys.stderr.flush()
    os.dup2(real_stderr, 2)
    os.close(real_stderr)
    try:
      forwarder.wait(timeout=5)
    except subprocess.TimeoutExpired:
      pass  # a child process still holds the pipe: its lines still arrive after this one exits

  atexit.register(restore)


# A line ends at \n, or at a \r not followed by \n (a progress bar redrawing itself).
_LINE_END = re.compile(rb"(?<=\n)|(?<=\r)(?!\n)")
# How long a line without its end waits for the rest (a prompt or a progress bar waits for nothing).
_PARTIAL_LINE_WAIT_S = 0.05


def forward(source: int = 0, sink: int = 1) -> None:
  """Copies `source` to `sink` until end of file, leaving out the lines that are NOISE."""
  import select  # pylint: disable=import-outside-toplevel
  import signal  # pylint: disable=import-outside-toplevel

  # Ctrl-C reaches the process group: outlive the program to forward its KeyboardInterrupt.
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  pending = b""
  while True:
    if pending and not select.select([source], [], [], _PARTIAL_LINE_WAIT_S)[0]:
      _write(sink, pending)
      pending = b""
    chunk = os.read(source, 1 << 16)
    if not chunk:
      break
    *lines, pending = _LINE_END.split(pending + chunk)
    kept = b"".join(line for line in lines if not is_noise(line.rstrip(b"\r\n")))
    if kept:
      _write(sink, kept)
  if pending and not is_noise(pending):
    _write(sink, pending)


def _write(fd: int, data: bytes) -> None:
  view = memoryview(data)
  try:
    while view:
      view = view[os.write(fd, view):]
  except OSError:
    pass  # the real stderr is closed: the program's writes must not fail for it


if __name__ == "__main__":
  forward()
