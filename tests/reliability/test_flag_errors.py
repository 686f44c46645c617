"""A bad command line (a required flag missing, an unknown flag) gets the same contract as bad
input: one `error:` line, exit status 2, no usage dump or traceback (absl alone prints its usage
and exits 1); `--help` still prints the usage and exits 0. Three real subprocesses (absl and
argparse scripts), the rest checked in-process and by reading the scripts."""

import argparse
import os

import pytest

from bert_keras.errors import parse_flags, run_main
from tests.reliability import bad_inputs as B


def _one_error_line(result, *needles):
  last = B.user_error_line(result, *needles)
  assert result.stderr.count("error:") == 1, result.stderr[-2000:]
  assert "FATAL" not in result.stderr and "USAGE" not in result.stderr.upper(), result.stderr[-2000:]
  return last


def test_absl_script_without_a_required_flag():
  _one_error_line(B.run_script("run_finetuning", "--output_dir=/nonexistent/never_written"),
                  "--task", "(see --help)")


def test_absl_script_help_exits_zero():
  result = B.run_script("predict", "--help")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "--saved_model" in result.stdout and "error:" not in result.stderr


def test_argparse_script_without_a_required_flag():
  _one_error_line(B.run_script("create_pretraining_data", "--input_format=bert_text"),
                  "the following arguments are required: --output_dir")


def test_every_script_parses_its_flags_through_the_contract():
  """absl scripts pass `flags_parser=parse_flags`; the two Beam scripts give absl nothing to parse
  (argv[:1]) and parse with argparse inside run_main, whose errors run_main turns into one line."""
  for name in sorted(os.listdir(B.SCRIPTS)):
    if not name.endswith(".py"):
      continue
    with open(os.path.join(B.SCRIPTS, name), encoding="utf-8") as f:
      text = f.read()
    assert "app.run(run_main(main), flags_parser=" in text, name
    assert ("flags_parser=parse_flags)" in text
            or "flags_parser=lambda argv: (flags.FLAGS(argv[:1]), argv)[1])" in text), name


def test_parse_flags_missing_and_unknown_flags(monkeypatch, capsys):
  from absl import flags
  values = flags.FlagValues()
  flags.DEFINE_string("task", None, "the task", flag_values=values)
  flags.DEFINE_integer("batch_size", 8, "batch", flag_values=values)
  flags.mark_flag_as_required("task", flag_values=values)
  monkeypatch.setattr(flags, "FLAGS", values)
  for argv, needle in ((["prog"], "--task"), (["prog", "--task=x", "--bogus=1"], "bogus"),
                       (["prog", "--task=x", "--batch_size=many"], "batch_size")):
    values.unparse_flags()
    with pytest.raises(SystemExit) as info:
      parse_flags(argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("error: ") and needle in err, err
  values.unparse_flags()
  assert parse_flags(["prog", "--task=x", "rest"]) == ["prog", "rest"] and values.task == "x"


def test_run_main_turns_argparse_errors_into_one_line(capsys):
  original = argparse.ArgumentParser.error

  def main(argv):
    parser = argparse.ArgumentParser(prog="beam_script")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--vocab_size", type=int)
    parser.parse_known_args(argv[1:])

  for argv, needle in ((["x"], "required: --output_dir"),
                       (["x", "--output_dir=o", "--vocab_size=big"], "invalid int value: 'big'")):
    with pytest.raises(SystemExit) as info:
      run_main(main)(argv)
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("error: beam_script: ") and needle in err, err
  assert argparse.ArgumentParser.error is original  # restored after main
