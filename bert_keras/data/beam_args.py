"""The command line of the Beam scripts: our argparse flags, and everything else for Beam.

A script's parser takes its own flags with parse_known_args and hands the rest to Beam's
PipelineOptions. A local runner ignores what no options class defines, so a misspelt flag of ours
(`--dupe_factr=2`) would run with the default; remote runners forward unknown options (Dataflow
passes them to the service, Flink to its job jar), so there they may be meant. `check_beam_args`
refuses a leftover argument that no imported Beam PipelineOptions class defines when the runner
is local, and with any runner when it is close to one of the script's own flags; the error names
the closest of our flags (or Beam's).
"""

from __future__ import annotations

import argparse
import difflib
from typing import Sequence

from bert_keras.errors import UserError


def add_help_aliases(parser: argparse.ArgumentParser) -> None:
  """`--helpfull` (what the absl scripts answer to) prints this parser's help, as `--help` does."""
  parser.add_argument("--helpfull", action="help", help=argparse.SUPPRESS)


def _beam_parser() -> argparse.ArgumentParser:
  """A parser with the options of every PipelineOptions class, built as Beam's own
  PipelineOptions.get_all_options builds it."""
  # pylint: disable=g-import-not-at-top,protected-access  (Beam is imported by the caller's run)
  from apache_beam.options import pipeline_options

  parser = pipeline_options._BeamArgumentParser(allow_abbrev=False)
  classes = {}
  for cls in pipeline_options.PipelineOptions.__subclasses__():
    classes.setdefault(str(cls), cls)
  for cls in classes.values():
    cls._add_argparse_args(parser)
  return parser


# Runners that run the pipeline in this process or its workers: an option no class defines goes
# nowhere there.
LOCAL_RUNNERS = (None, "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner",
                 "FnApiRunner", "PrismRunner")


def _option_names(parser: argparse.ArgumentParser) -> list:
  """Every `--name` option string of `parser`."""
  actions = parser._actions  # pylint: disable=protected-access
  return [s for action in actions for s in action.option_strings if s.startswith("--")]


def check_beam_args(beam_args: Sequence[str], ours: argparse.ArgumentParser) -> None:
  """UserError for the first argument in `beam_args` (what `ours` left over) that is not a Beam
  pipeline option when the runner is local, or that is close to a flag of `ours` with any runner;
  the message names it and the closest flag of `ours` or of Beam."""
  beam = _beam_parser()
  known, unknown = beam.parse_known_args(list(beam_args))
  local = getattr(known, "runner", None) in LOCAL_RUNNERS
  for arg in unknown:
    name = arg.split("=", 1)[0]
    # Not `--name`: a stray word, or the value of an unknown option given as `--name value`.
    ours_close = (difflib.get_close_matches(name, _option_names(ours), n=1)
                  if name.startswith("--") else [])
    if not (local or ours_close):
      continue  # a remote runner forwards it
    close = ours_close or difflib.get_close_matches(name, _option_names(beam), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise UserError(f"{ours.prog}: unknown argument {arg!r}: neither a flag of this script "
                    f"nor an Apache Beam pipeline option{hint} (see --help)")
