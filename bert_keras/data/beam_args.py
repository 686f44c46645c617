"""The command line of the Beam scripts: our argparse flags, and everything else for Beam.

The scripts' own flags are defined here, in a module that imports neither Beam nor TensorFlow, so
`--help` and a bad value of one of them answer before those imports (a leftover argument still
needs Beam's option classes to be checked).

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
import dataclasses
import difflib
from typing import List, Sequence, Tuple

from bert_keras.console import VERBOSE_HELP
from bert_keras.beam_runner import LOCAL_RUNNERS, with_local_runner_defaults
from bert_keras.configs.base import ConfigError, is_int, is_number, read_config_file
from bert_keras.configs.pretraining_data import INPUT_FORMATS, PretrainingDataConfig
from bert_keras.errors import UserError

CONFIG_FILE_HELP = ("start from this file, JSON or YAML, of this script's flags by name; flags "
                    "given override its values")
# What learn_vocab_config.json records of a run besides its flags; read back, a record, not settings.
VOCAB_RECORD_KEYS = ("vocab_tokens", "dropped", "first_dropped")


def add_help_aliases(parser: argparse.ArgumentParser) -> None:
  """`--helpfull` (what the absl scripts answer to) prints this parser's help, as `--help` does."""
  parser.add_argument("--helpfull", action="help", help=argparse.SUPPRESS)


def add_verbose(parser: argparse.ArgumentParser) -> None:
  """`--verbose`, which every entry point takes; `errors.pass_flags_to_main` reads it before this
  parser runs, so here it is only listed by --help and checked."""
  parser.add_argument("--verbose", type=parse_bool, nargs="?", const=True, default=False,
                      help=VERBOSE_HELP)


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
  # A local runner runs the pipeline here or in its workers: an option no class defines goes nowhere.
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


def _file_value(path: str, action: argparse.Action, value):
  """`value` of flag `action` from the config file `path`, its type and choices checked."""
  name = action.dest
  checks = {int: (is_int, "an integer"), float: (is_number, "a number"),
            parse_bool: (lambda v: isinstance(v, bool), "true or false")}
  check, expected = checks.get(action.type, (lambda v: isinstance(v, str), "a string"))
  if not (check(value) or (value is None and action.default is None)):
    raise ConfigError(f"{path}: {name}={value!r} must be {expected}", key=name)
  if action.choices and value not in action.choices:
    raise ConfigError(f"{path}: {name}={value!r}; expected one of {tuple(action.choices)}",
                      key=name)
  return value


def parse_with_config_file(parser: argparse.ArgumentParser, argv: Sequence[str],
                           record_keys: Sequence[str] = (), within: str = ""
                           ) -> Tuple[argparse.Namespace, List[str]]:
  """parse_known_args with `--config_file`: defaults < the file's values < the flags given. The
  file's keys are the flags' names (`record_keys`, what a run's own record adds, are skipped), or
  a run's record holds them in its object `within` (summary.json's "config"); every error names
  the file and the key."""
  parser.add_argument("--config_file", default=None, help=CONFIG_FILE_HELP)
  pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
  pre.add_argument("--config_file", default=None)
  pre, _ = pre.parse_known_args(list(argv))
  if pre.config_file:
    actions = {a.dest: a for a in parser._actions  # pylint: disable=protected-access
               if a.option_strings and a.dest not in ("help", "helpfull", "config_file")}
    values, read = {}, read_config_file(pre.config_file, parser.prog)
    for key, value in (read[within] if isinstance(read.get(within), dict) else read).items():
      if key in record_keys:
        continue
      if key not in actions:
        raise ConfigError(f"{pre.config_file}: {key}: unknown key; expected one of "
                          f"{sorted(actions)}", key=key)
      values[key] = _file_value(pre.config_file, actions[key], value)
    parser.set_defaults(**values)
    for action in parser._actions:  # pylint: disable=protected-access
      action.required = action.required and action.dest not in values
  return parser.parse_known_args(list(argv))


def parse_bool(value: str) -> bool:
  if value.lower() in ("1", "true", "yes"):
    return True
  if value.lower() in ("0", "false", "no"):
    return False
  raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def _pretraining_data_parser() -> argparse.ArgumentParser:
  """One flag per PretrainingDataConfig field, with its type, help and default (the config's)."""
  parser = argparse.ArgumentParser(
      description="The Beam pipeline that turns a text corpus into BERT pretraining TFRecords",
      allow_abbrev=False, formatter_class=argparse.ArgumentDefaultsHelpFormatter)
  types = {"int": int, "float": float, "str": str, "Optional[int]": int, "Optional[str]": str}
  for field in dataclasses.fields(PretrainingDataConfig):
    kind = dict(type=parse_bool, nargs="?", const=True) if field.type == "bool" else dict(
        type=types[field.type], choices=PretrainingDataConfig.CHOICES.get(field.name))
    metavar = None if PretrainingDataConfig.CHOICES.get(field.name) else field.name.upper()
    parser.add_argument(f"--{field.name}", metavar=metavar, default=field.default,
                        help=field.metadata["help"], required=field.name == "output_dir", **kind)
  add_help_aliases(parser)
  add_verbose(parser)
  return parser


def parse_pretraining_data_args(argv: Sequence[str]) -> Tuple[argparse.Namespace, List[str]]:
  """create_pretraining_data's flags -> known_args; everything else, which must be Beam options,
  is passed to Beam.

  Without a --runner (or with the DirectRunner) the DirectRunner runs multi-process on all cores
  unless --direct_running_mode / --direct_num_workers say otherwise.
  """
  parser = _pretraining_data_parser()
  known, beam_args = parse_with_config_file(parser, argv, within="config")
  check_beam_args(beam_args, parser)
  return known, with_local_runner_defaults(beam_args)


def parse_vocab_args(argv: Sequence[str]) -> Tuple[argparse.Namespace, List[str]]:
  """learn_vocab's flags -> known_args; the rest, which must be Beam options, goes to Beam
  (DirectRunner multi-process by default)."""
  parser = argparse.ArgumentParser(description="Learns a WordPiece vocab.txt", allow_abbrev=False)
  parser.add_argument("--input_files", default=None,
                      help="comma-separated paths or globs; default: the embedded Wikipedia dump")
  parser.add_argument("--input_format", default=PretrainingDataConfig.input_format,
                      choices=INPUT_FORMATS)
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--vocab_size", type=int, default=30522)
  parser.add_argument("--lower_case", type=parse_bool, nargs="?", const=True, default=True)
  parser.add_argument("--num_unused", type=int, default=99)
  parser.add_argument("--min_count", type=int, default=1)
  parser.add_argument("--max_input_words", type=int, default=5_000_000)
  parser.add_argument("--num_iterations", type=int, default=4, help="learner passes per threshold")
  parser.add_argument("--json_text_key", default=PretrainingDataConfig.json_text_key)
  add_help_aliases(parser)
  add_verbose(parser)
  known, beam_args = parse_with_config_file(parser, argv, VOCAB_RECORD_KEYS)
  check_beam_args(beam_args, parser)
  return known, with_local_runner_defaults(beam_args)
