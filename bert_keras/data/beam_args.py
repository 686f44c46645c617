"""The command line of the Beam scripts: our argparse flags (answered before Beam or TensorFlow is
imported), and everything else for Beam's PipelineOptions.

A local runner ignores options no class defines, so a misspelt flag of ours would silently run
with its default, while remote runners forward unknown options (they may be meant there):
`check_beam_args` refuses a leftover argument with a local runner, and with any runner when it is
close to one of our flags.
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


def _beam_parser() -> argparse.ArgumentParser:
  """A parser of every PipelineOptions class's options, as PipelineOptions.get_all_options builds it."""
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
  actions = parser._actions  # pylint: disable=protected-access
  return [s for action in actions for s in action.option_strings if s.startswith("--")]


def check_beam_args(beam_args: Sequence[str], ours: argparse.ArgumentParser) -> None:
  """UserError naming the first refused argument of `beam_args` (see the module doc) and the
  closest flag of `ours` or of Beam."""
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


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str], record_keys: Sequence[str] = (),
           within: str = "") -> Tuple[argparse.Namespace, List[str]]:
  """(our flags, Beam's arguments with the local defaults) of `argv`, with `--config_file`:
  defaults < the file's values < the flags given. The file's keys are the flags' names
  (`record_keys`, what a run's record adds, skipped), or are in its object `within` (summary.json's
  "config"). Adds --helpfull (as the absl scripts) and --verbose (read by
  errors.pass_flags_to_main before this runs; here listed and checked)."""
  parser.add_argument("--helpfull", action="help", help=argparse.SUPPRESS)
  parser.add_argument("--verbose", type=parse_bool, nargs="?", const=True, default=False,
                      help=VERBOSE_HELP)
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
  known, beam_args = parser.parse_known_args(list(argv))
  check_beam_args(beam_args, parser)
  return known, with_local_runner_defaults(beam_args)


def parse_bool(value: str) -> bool:
  if value.lower() in ("1", "true", "yes"):
    return True
  if value.lower() in ("0", "false", "no"):
    return False
  raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def parse_pretraining_data_args(argv: Sequence[str]) -> Tuple[argparse.Namespace, List[str]]:
  """create_pretraining_data's flags (one per PretrainingDataConfig field, with its type, help and
  default) -> (known_args, beam_args)."""
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
  return _parse(parser, argv, within="config")


def parse_vocab_args(argv: Sequence[str]) -> Tuple[argparse.Namespace, List[str]]:
  """learn_vocab's flags -> (known_args, beam_args)."""
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
  return _parse(parser, argv, VOCAB_RECORD_KEYS)
