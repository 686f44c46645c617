"""`--help` and a bad flag answer before TensorFlow or Beam is imported, in every script and
pipeline entry point: the process is checked at exit for what it imported, so the test does not
depend on how fast the machine is (importing TensorFlow takes 5-8 s on 2 cores).

The bad flag is an unknown one, except for the Beam scripts, which pass unknown flags on to Beam
and need Beam's option classes to refuse them: there it is a bad value of one of their own flags."""

import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEAVY = ("tensorflow", "keras", "apache_beam", "tensorflow_text", "tensorflow_datasets")
# Runs the entry point as __main__ and reports, at exit, which heavy packages it imported.
_PROBE = """
import atexit, runpy, sys
heavy = {heavy!r}
atexit.register(lambda: print("imported:" + ",".join(
    sorted(h for h in heavy if h in sys.modules)), file=sys.stderr))
kind, target = sys.argv[1], sys.argv[2]
sys.argv = [target] + sys.argv[3:]
if kind == "path":
  runpy.run_path(target, run_name="__main__")
else:
  runpy.run_module(target, run_name="__main__", alter_sys=True)
""".format(heavy=HEAVY)

ENTRY_POINTS = (
    [("path", os.path.relpath(p, ROOT)) for p in sorted(glob.glob(os.path.join(ROOT, "scripts",
                                                                               "*.py")))]
    + [("module", "pipeline.demo"), ("module", "pipeline.query_served_models"),
       ("module", "pipeline.compile"), ("module", "components.cli"),
       ("module", "studies.bert_gpt_ablation.run_ablation")])


BEAM_BAD_FLAGS = {"scripts/create_pretraining_data.py": ("--output_dir=x", "--dupe_factor=ten"),
                  "scripts/learn_vocab.py": ("--output_dir=x", "--vocab_size=big"),
                  # The shared component CLI takes the component's name first.
                  "components.cli": ("pusher", "--no_such_flag=1")}


def _run(kind, target, *args):
  run = subprocess.run([sys.executable, "-c", _PROBE, kind, target, *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
  imported = [line for line in run.stderr.splitlines() if line.startswith("imported:")]
  assert imported, run.stderr[-2000:]
  return run, imported[-1][len("imported:"):]


def test_every_entry_point_is_listed():
  assert len(ENTRY_POINTS) >= 8 + 5, ENTRY_POINTS  # scripts, modules


@pytest.mark.parametrize("kind,target", ENTRY_POINTS, ids=[t for _, t in ENTRY_POINTS])
def test_help_and_a_bad_flag_answer_before_heavy_imports(kind, target):
  run, imported = _run(kind, target, "--help")
  assert run.returncode == 0, run.stderr[-2000:]
  if target != "components.cli":  # lists the components; `cli NAME --help` the flags
    assert "--verbose" in run.stdout or "--[no]verbose" in run.stdout, f"{target} --help: {run.stdout}"
  assert imported == "", f"{target} --help imported {imported}"
  bad = BEAM_BAD_FLAGS.get(target, ("--no_such_flag=1",))
  run, imported = _run(kind, target, *bad)
  errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
  assert run.returncode == 2 and len(errors) == 1, run.stderr[-2000:]
  assert bad[-1].split("=")[0].lstrip("-") in errors[0], errors
  assert imported == "", f"{target} {bad} imported {imported}: {run.stderr[-500:]}"


# --- A wrong command (not only a bad flag) fails before TensorFlow loads ---------------------------

# Generous: the answer takes about 1 s on 2 busy cores; importing TensorFlow alone takes 5-8 s.
WRONG_COMMAND_SECONDS = 4.0


def _wrong_commands(tmp):
  """(script, args, what the one error line says) for wrong commands that need no TensorFlow to
  tell; a directory stands for an unreadable file (root reads files whatever their mode)."""
  os.makedirs(os.path.join(tmp, "glue", "train.tsv"))  # a directory where a file is expected
  os.makedirs(os.path.join(tmp, "export", "saved_model.pb"))
  os.makedirs(os.path.join(tmp, "earlier"))
  with open(os.path.join(tmp, "earlier", "config.json"), "w") as f:
    f.write('{"task": {"task": "squad_v1"}}')  # what a SQuAD run records
  out = f"--output_dir={tmp}/out"
  finetune = "scripts/run_finetuning.py"
  return [
      (finetune, ["--task=glue/nope", out], "unknown task preset 'glue/nope'"),
      (finetune, ["--task=glue/mrpc", f"--data_dir={tmp}/missing", out],
       f"--data_dir={tmp}/missing: no such data directory"),
      (finetune, ["--task=glue/mrpc", f"--data_dir={tmp}/glue", out],
       f"{tmp}/glue/train.tsv: is a directory"),
      (finetune, ["--task=polarity", f"--init_checkpoint={tmp}/missing", out],
       f"--init_checkpoint={tmp}/missing: no such checkpoint file or directory"),
      (finetune, ["--task=polarity", "--model=bert_tiny", f"--output_dir={tmp}/earlier"],
       "holds a fine-tuning run of task 'squad_v1', not of task 'polarity'"),
      ("scripts/predict.py", [f"--saved_model={tmp}/export", "--text_a=a"],
       f"{tmp}/export/saved_model.pb: is a directory"),
      ("scripts/predict.py", [f"--saved_model={tmp}/missing", "--text_a=a"],
       f"--saved_model={tmp}/missing: no such export directory"),
  ]


def test_wrong_commands_fail_fast_before_heavy_imports(tmp_path):
  import time  # pylint: disable=g-import-not-at-top
  for script, args, needle in _wrong_commands(str(tmp_path)):
    start = time.perf_counter()
    run, imported = _run("path", script, *args)
    seconds = time.perf_counter() - start
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert run.returncode == 2 and len(errors) == 1, (script, args, run.stderr[-2000:])
    assert needle in errors[0] and "Traceback" not in run.stderr, (needle, errors)
    assert imported == "", f"{script} {args} imported {imported}"
    assert seconds < WRONG_COMMAND_SECONDS, (script, args, seconds)
  assert not os.path.exists(tmp_path / "out")
