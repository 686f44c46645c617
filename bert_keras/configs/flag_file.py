"""--config_file of the absl scripts whose run is not one config object (predict, convert_checkpoint,
train_bpe): a JSON or YAML file of the script's flags by name, below the flags given."""

import sys

from absl import flags

from bert_keras.configs.base import ConfigError, read_config_file
from bert_keras.errors import parse_flags

HELP = "start from this file, JSON or YAML, of this script's flags by name; flags given override it"


def _file_args(path: str) -> list[str]:
  known = sorted(name for name in flags.FLAGS if name != "config_file")
  args = []
  for name, value in read_config_file(path, "flags").items():
    if name not in known:
      raise ConfigError(f"{path}: {name}: unknown flag; expected one of {known}")
    if isinstance(value, (dict, type(None))):
      raise ConfigError(f"{path}: {name}={value!r} must be a string, number, true/false or a list")
    if isinstance(value, bool):
      args.append(f"--{'' if value else 'no'}{name}")
    else:
      args.append(f"--{name}={','.join(map(str, value)) if isinstance(value, list) else value}")
  return args


def parse_flags_with_config_file(argv):
  """absl `flags_parser`: parse_flags, with --config_file's flags before those of the command line."""
  path = None
  for i, arg in enumerate(argv[1:], 1):
    if arg.startswith("--config_file="):
      path = arg.split("=", 1)[1]
    elif arg == "--config_file" and i + 1 < len(argv):
      path = argv[i + 1]
  if path:
    try:
      argv = [argv[0], *_file_args(path), *argv[1:]]
    except ConfigError as e:
      print(f"error: {e}", file=sys.stderr)
      sys.exit(2)
  return parse_flags(argv)
