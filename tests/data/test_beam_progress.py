"""A Beam pipeline reports while it runs (bert_keras/data/beam_progress.py): the pass-through step
prints each worker's count at a cadence and its total at the end; the heartbeat prints the time
elapsed while the run blocks, and how it ended."""

import io
import time

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from bert_keras.data.beam_progress import ReportProgress, heartbeat


def test_report_progress_passes_elements_through_and_prints_counts(capsys):
  with TestPipeline(runner="FnApiRunner") as p:
    out = p | beam.Create(list(range(5))) | beam.ParDo(ReportProgress("documents read", every_s=0.0))
    assert_that(out, equal_to(list(range(5))))
  lines = [line for line in capsys.readouterr().err.splitlines() if "documents read" in line]
  assert lines and all(" so far" in line for line in lines), lines
  assert lines[-1].split(": ")[1].startswith("5 so far"), lines  # the worker's total


def test_heartbeat_prints_while_running_and_at_the_end():
  stream = io.StringIO()
  with heartbeat("learn_vocab", every_s=0.05, stream=stream):
    time.sleep(0.3)
  lines = stream.getvalue().splitlines()
  assert len(lines) >= 3 and all(l == "learn_vocab: running, 0:00:00 elapsed" for l in lines[:-1])
  assert lines[-1] == "learn_vocab: done in 0:00:00"
  stream = io.StringIO()
  with pytest.raises(KeyboardInterrupt):
    with heartbeat("learn_vocab", every_s=10, stream=stream):
      raise KeyboardInterrupt
  assert stream.getvalue() == "learn_vocab: stopped after 0:00:00\n"


def test_report_progress_can_count_the_records_of_each_element(capsys):
  with TestPipeline(runner="FnApiRunner") as p:
    out = (p | beam.Create([(0, ["a", "b"]), (1, ["c"])])
           | beam.ParDo(ReportProgress("instances created", every_s=0.0, weight=lambda e: len(e[1]))))
    assert_that(out, equal_to([(0, ["a", "b"]), (1, ["c"])]))
  lines = [line for line in capsys.readouterr().err.splitlines() if "instances created" in line]
  assert lines[-1].split(": ")[1] == "3 so far", lines
