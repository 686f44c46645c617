"""Old flag names that keep working, with a deprecation warning naming the new one.

absl scripts: `define_alias("distribution", "distribution_strategy")` after the new flag is
defined. argparse scripts: `add_alias(parser, "--random_seed", "--seed")`.
"""

from __future__ import annotations

import argparse
import warnings

from absl import flags


def warn_deprecated(old: str, new: str) -> None:
  """Warns that --old is deprecated in favour of --new (each a flag, or a flag=value)."""
  # FutureWarning: shown to users by default (DeprecationWarning is not).
  warnings.warn(f"--{old} is deprecated, use --{new} (the old name still works for now)",
                FutureWarning, stacklevel=2)


def define_alias(old: str, new: str, flag_values: flags.FlagValues = flags.FLAGS) -> None:
  """Defines --old as an alias of the already defined --new: setting it sets --new and warns."""
  flag = flag_values[new]

  class _DeprecatedAlias(flags.Flag):
    """Parses into the new flag (as absl's DEFINE_alias does), warning."""

    def parse(self, argument):
      warn_deprecated(old, new)
      flag.parse(argument)
      self.present += 1

    def _parse_from_default(self, value):
      return value

    @property
    def value(self):
      return flag.value

    @value.setter
    def value(self, value):
      flag.value = value

  flags.DEFINE_flag(_DeprecatedAlias(flag.parser, flag.serializer, old, flag.default,
                                     f"Deprecated: use --{new}.", boolean=flag.boolean),
                    flag_values)


def add_alias(parser: argparse.ArgumentParser, old: str, new: str) -> None:
  """Adds `old` (e.g. "--random_seed") as an alias of the argparse option `new` that warns."""
  # pylint: disable-next=protected-access
  action = next(a for a in parser._actions if new in a.option_strings)

  class _DeprecatedAlias(argparse.Action):

    def __call__(self, parser, namespace, values, option_string=None):
      warn_deprecated(old.lstrip("-"), new.lstrip("-"))
      setattr(namespace, action.dest, values)

  parser.add_argument(old, type=action.type, dest=action.dest, default=argparse.SUPPRESS,
                      action=_DeprecatedAlias, help=f"deprecated: use {new}")
