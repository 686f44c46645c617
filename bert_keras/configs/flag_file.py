"""--config_file of the scripts whose run is no one config (predict, convert_checkpoint, train_bpe):
a JSON or YAML file of its flags by name (absl's and --verbose, which parse_flags defines, too), below
the flags given."""

from absl import flags

from bert_keras.configs.base import ConfigError, read_config_file
from bert_keras.errors import fail, parse_flags

HELP = "start from this file, JSON or YAML, of this script's flags by name; flags given override it"


def _as_flag(path: str, name: str, value) -> str:
  if name not in (*flags.FLAGS, "verbose") or name == "config_file" or isinstance(value, (dict, type(None))):
    raise ConfigError(f"{path}: {name}={value!r}: not a value of a flag of this script")
  if isinstance(value, bool):
    return f"--{'' if value else 'no'}{name}"
  return f"--{name}={','.join(map(str, value)) if isinstance(value, list) else value}"


def parse_flags_with_config_file(argv):
  """absl `flags_parser`: parse_flags, with --config_file's flags before those of the command line."""
  paths = [a.split("=", 1)[1] if "=" in a else b for a, b in zip(argv[1:], [*argv[2:], ""])
           if a.split("=", 1)[0] == "--config_file"]
  try:
    given = [_as_flag(p, k, v) for p in paths[-1:] for k, v in read_config_file(p, "flags").items()]
  except ConfigError as e:
    fail(str(e))
  return parse_flags([argv[0], *given, *argv[1:]])
