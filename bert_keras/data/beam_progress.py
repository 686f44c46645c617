"""Progress of a Beam pipeline while it runs (the local runner reports only at the end): per worker
`ReportProgress`, and a `heartbeat` of the main process."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

import apache_beam as beam

from bert_keras.progress import LOG_EVERY_S, Progress, format_duration, progress_line

HEARTBEAT_EVERY_S = 30.0


class ReportProgress(beam.DoFn):
  """Passes its input through; prints `<label> (worker <pid>): <n> so far, <r> /s`, n counting
  elements or summing `weight(element)`."""

  def __init__(self, label: str, every_s: float = LOG_EVERY_S, weight=None):
    super().__init__()
    self._label = label
    self._every_s = every_s
    self._weight = weight

  def setup(self):
    self._progress = Progress(f"{self._label} (worker {os.getpid()})", None,
                              every_s=self._every_s)
    self._count = 0

  def process(self, element):
    self._count += 1 if self._weight is None else self._weight(element)
    self._progress.update(self._count)
    yield element

  def teardown(self):
    if self._count:  # the worker's total (teardown may come long after its last element: no rate)
      self._progress.stream.write(progress_line(self._progress.label, self._count, None) + "\n")
      self._progress.stream.flush()


@contextlib.contextmanager
def heartbeat(label: str, every_s: float = HEARTBEAT_EVERY_S, stream=None):
  """Within: `<label>: running, <h:mm:ss> elapsed` every `every_s`; then `done in` / `stopped after`."""
  stream = stream if stream is not None else sys.stderr
  start = time.monotonic()
  stop = threading.Event()

  def beat():
    while not stop.wait(every_s):
      stream.write(f"{label}: running, {format_duration(time.monotonic() - start)} elapsed\n")
      stream.flush()

  thread = threading.Thread(target=beat, name=f"{label} heartbeat", daemon=True)
  thread.start()
  outcome = "stopped after"
  try:
    yield
    outcome = "done in"
  finally:
    stop.set()
    thread.join()
    stream.write(f"{label}: {outcome} {format_duration(time.monotonic() - start)}\n")
    stream.flush()
