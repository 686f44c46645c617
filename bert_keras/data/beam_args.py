"""The command line of the Beam scripts: our argparse flags, and everything else for Beam.

A script's parser takes its own flags with parse_known_args and hands the rest to Beam's
PipelineOptions, which silently drops what it does not know: a misspelt flag of ours
(`--dupe_factr=2`) would run with the default. `check_beam_args` refuses any leftover argument
that no Beam PipelineOptions class defines, naming the closest of our flags (or Beam's).
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


def _option_names(parser: argparse.ArgumentParser):
  return [s for action in parser._actions for s in action.option_strings if s.startswith("--")]  # pylint: disable=protected-access


def check_beam_args(beam_args: Sequence[str], ours: argparse.ArgumentParser) -> None:
  """UserError for the first argument in `beam_args` (what `ours` left over) that is not a Beam
  pipeline option, naming it and the closest flag of `ours` or of Beam."""
  beam = _beam_parser()
  _, unknown = beam.parse_known_args(list(beam_args))
  if not unknown:
    return
  name = unknown[0].split("=", 1)[0]
  close = (difflib.get_close_matches(name, _option_names(ours), n=1)
           or difflib.get_close_matches(name, _option_names(beam), n=1))
  hint = f"; did you mean {close[0]}?" if close else ""
  raise UserError(f"{ours.prog}: unknown argument {unknown[0]!r}: neither a flag of this script "
                  f"nor an Apache Beam pipeline option{hint} (see --help)")
