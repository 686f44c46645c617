"""A bad command line (a required flag missing, an unknown flag) gets the same contract as bad
input: one `error:` line, exit status 2, no usage dump or traceback (absl alone prints its usage
and exits 1); `--help` still prints the usage and exits 0. Three real subprocesses (absl and
argparse scripts), two with TensorFlow unimportable (a bad flag value is answered before it loads),
the rest checked in-process and by reading the scripts."""

import argparse
import os
import subprocess
import sys

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


@pytest.mark.parametrize("script, flag", [("run_pretraining", "--special_token_ids=a,b"),
                                          (B.ABLATION, "--seeds=a,b")])
def test_bad_flag_value_is_answered_before_tensorflow_loads(script, flag):
  """These scripts check their flag values before importing TensorFlow (seconds to load), so a
  typo is answered at once. Run here with TensorFlow made unimportable."""
  argv = [os.path.basename(B.script_path(script)), flag, "--output_dir=/nonexistent/never_written"]
  driver = ("import runpy, sys; sys.modules['tensorflow'] = None; "
            f"sys.argv = {argv!r}; "
            f"runpy.run_path({B.script_path(script)!r}, run_name='__main__')")
  result = subprocess.run([sys.executable, "-c", driver], cwd=B.ROOT, capture_output=True,
                          text=True, timeout=240, env=dict(os.environ, PYTHONPATH=B.ROOT))
  _one_error_line(result, flag)


def test_every_script_parses_its_flags_through_the_contract():
  """absl scripts pass `flags_parser=parse_flags` (or parse_flags_with_config_file, which reads
  --config_file and then calls it); the two Beam scripts give absl nothing to parse
  (pass_flags_to_main) and parse with argparse inside run_main, whose errors run_main turns into
  one line."""
  for name in sorted(os.listdir(B.SCRIPTS)):
    if not name.endswith(".py"):
      continue
    with open(os.path.join(B.SCRIPTS, name), encoding="utf-8") as f:
      text = f.read()
    assert "app.run(run_main(main), flags_parser=" in text, name
    assert any(f"flags_parser={parser})" in text for parser in (
        "parse_flags", "parse_flags_with_config_file", "pass_flags_to_main")), name


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
  # --verbose: parsing alone must not quiet the console of the test process.
  assert parse_flags(["prog", "--task=x", "--verbose", "rest"]) == ["prog", "rest"]
  assert values.task == "x" and values.verbose


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


# --- the component CLIs and the pipeline's entry points --------------------------------------------

def _run_module(module, *args, timeout=240):
  import subprocess, sys  # pylint: disable=g-import-not-at-top,multiple-imports
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=B.ROOT)
  return subprocess.run([sys.executable, "-m", module, *args], cwd=B.ROOT, env=env,
                        capture_output=True, text=True, timeout=timeout)


def test_component_cli_unknown_flag_and_help():
  _one_error_line(_run_module("components.cli", "pusher", "--bogus=1"), "bogus", "(see --help)")
  result = _run_module("components.cli", "vocabulary", "--help")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "vocab_size" in result.stdout and "error:" not in result.stderr


def test_distribution_strategy_is_checked_before_anything_runs(tmp_path):
  """A typo must not cost the ingestion, vocabulary and examples steps before the trainer sees it."""
  out = tmp_path / "demo"
  _one_error_line(_run_module("pipeline.demo", f"--output_dir={out}", "--distribution_strategy=bogus"),
                  "distribution_strategy", "mirrored")
  _one_error_line(_run_module("components.cli", "pretrainer", "--distribution_strategy=bogus"),
                  "distribution_strategy", "mirrored")
  assert not out.exists()


def test_unbalanced_quote_in_beam_pipeline_args(tmp_path):
  out = tmp_path / "demo"
  B.user_error_line(_run_module("pipeline.demo", f"--output_dir={out}", "--beam_pipeline_args=\"x"),
                    "--beam_pipeline_args='\"x'", "No closing quotation")
  assert not out.exists()
  B.user_error_line(_run_module("components.cli", "vocabulary", f"--output_artifact=vocabulary={tmp_path / 'v'}",
                                "--beam_pipeline_args=\"x"), "No closing quotation")


def test_component_cli_bug_keeps_its_traceback(tmp_path):
  """An executor's bug (not a UserError) must exit 1 with its traceback, unlike bad input (2)."""
  import subprocess, sys  # pylint: disable=g-import-not-at-top,multiple-imports
  driver = B.write(str(tmp_path / "driver.py"), """
from absl import app
from bert_keras.errors import parse_flags, run_main
from bert_keras.orchestration import component_cli
from bert_keras.orchestration.component_launcher import FAILED, ExecutionResult
from components.pusher.spec import PusherSpec

class BuggyLauncher:
  def __init__(self, *args, **kwargs):
    pass

  def launch(self, force=False):
    try:
      {}["missing_key_in_an_executor"]
    except KeyError as e:
      return ExecutionResult(FAILED, "", {}, 0.0, error=f"KeyError: {e}", exception=e, traceback="")

component_cli.ComponentLauncher = BuggyLauncher
component_cli.define_flags(("default",))
app.run(run_main(lambda argv: component_cli.run_from_flags(PusherSpec)), flags_parser=parse_flags)
""")
  result = subprocess.run([sys.executable, driver, "--output_artifact=pushed_model=" + str(tmp_path / "p")],
                          cwd=B.ROOT, capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=B.ROOT))
  assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
  assert "Traceback" in result.stderr and "missing_key_in_an_executor" in result.stderr
  assert "error:" not in result.stderr


def test_a_user_error_from_a_beam_worker_is_a_user_error_again():
  """Beam's multi-process runner raises a RuntimeError holding the worker's traceback text."""
  from bert_keras.errors import UserError, worker_user_errors  # pylint: disable=g-import-not-at-top
  worker_text = ("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n"
                 "bert_keras.errors.UserError: vocab_size=-5 leaves no room\n\nDuring handling ...\n"
                 "bert_keras.errors.UserError: vocab_size=-5 leaves no room [while running 'Learn/Learn']\n")
  with pytest.raises(UserError) as info:
    with worker_user_errors():
      raise RuntimeError(worker_text)
  assert str(info.value) == "vocab_size=-5 leaves no room"
  with pytest.raises(RuntimeError, match="a bug"):  # anything else keeps its type and traceback
    with worker_user_errors():
      raise RuntimeError("a bug\nValueError: bert_keras.errors.UserError: is not at a line start")


# --- Ctrl-C and unreadable files: the same one-line answer from run_main -------------------------

_SLEEPER = """
import sys, time
from absl import app, flags
from bert_keras.errors import parse_flags, run_main

def main(argv):
  print("ready", flush=True)
  time.sleep(60)

app.run(run_main(main), flags_parser=parse_flags)
"""


def test_ctrl_c_prints_one_line_and_exits_130():
  """A real SIGINT (what Ctrl-C sends) to a program on the scripts' contract, quiet console on."""
  import signal  # pylint: disable=g-import-not-at-top
  # A job started in the background (`pytest ... &`) inherits SIGINT ignored; a terminal's
  # program does not.
  process = subprocess.Popen([sys.executable, "-c", _SLEEPER], cwd=B.ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=B.ROOT),
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  assert process.stdout.readline() == "ready\n"
  process.send_signal(signal.SIGINT)
  _, err = process.communicate(timeout=60)
  assert process.returncode == 130, err
  assert err.strip() == "interrupted (Ctrl-C)", err


@pytest.mark.parametrize("error,expected", [
    (PermissionError(13, "Permission denied", "/data/train.tsv"),
     "error: /data/train.tsv: cannot read it (Permission denied)"),
    (IsADirectoryError(21, "Is a directory", "/data/train.tsv"),
     "error: /data/train.tsv: cannot read it (Is a directory)")])
def test_an_unreadable_file_is_one_line_and_exit_2(capsys, error, expected):
  """What open() raises for a file without read permission (root reads every file, so the real
  case is tested with a directory in place of the file: tests/tasks/test_run_finetuning_script.py)."""
  def main(argv):
    raise error

  with pytest.raises(SystemExit) as info:
    run_main(main)(["x"])
  assert info.value.code == 2 and capsys.readouterr().err.strip() == expected


def test_other_errors_keep_their_traceback():
  def main(argv):
    raise OSError(5, "Input/output error")  # not a path the user gave: a bug or a broken disk

  with pytest.raises(OSError):
    run_main(main)(["x"])
