"""deprecated_flags: an old absl or argparse flag name sets the new flag, with a warning."""

import argparse

import pytest
from absl import flags

from bert_keras.deprecated_flags import add_alias, define_alias


def test_absl_alias_sets_the_new_flag_and_warns():
  values = flags.FlagValues()
  flags.DEFINE_integer("train_batch_size", 32, "batch", flag_values=values)
  flags.DEFINE_bool("jit", False, "jit", flag_values=values)
  define_alias("batch_size", "train_batch_size", values)
  define_alias("xla", "jit", values)
  with pytest.warns(FutureWarning, match="--batch_size is deprecated, use --train_batch_size"):
    values(["prog", "--batch_size=8", "--xla"])
  assert values.train_batch_size == 8 and values.jit is True
  quiet = flags.FlagValues()
  flags.DEFINE_integer("train_batch_size", 32, "batch", flag_values=quiet)
  define_alias("batch_size", "train_batch_size", quiet)
  quiet(["prog", "--train_batch_size=4"])
  assert quiet.train_batch_size == 4


def test_argparse_alias_sets_the_new_option_and_warns():
  parser = argparse.ArgumentParser()
  parser.add_argument("--seed", type=int, default=12345)
  add_alias(parser, "--random_seed", "--seed")
  with pytest.warns(FutureWarning, match="--random_seed is deprecated, use --seed"):
    assert parser.parse_args(["--random_seed=7"]).seed == 7
  assert parser.parse_args([]).seed == 12345
