"""Beam options for the Beam components: the run's --beam_pipeline_args plus the local defaults
the data scripts use (bert_keras/beam_runner.py: never the Prism download, the local engine
multi-process on all cores; a non-local --runner is passed through untouched), after the same
runner check the scripts make (a Dataflow runner without Beam's GCP extras is one error line)."""

from __future__ import annotations

from typing import Sequence

from bert_keras.beam_runner import check_runner_available, with_local_runner_defaults


def local_beam_args(args: Sequence[str]) -> list[str]:
  """A copy of `args` with the local runner defaults; UserError when the named runner cannot run
  (`check_runner_available`), before the executor builds its pipeline."""
  check_runner_available(args)
  return with_local_runner_defaults(list(args))
