"""The absl script: a user error exits 2 with one line and no traceback (real subprocesses: the
user's view); the unknown-preset and missing-vocabulary messages are checked in-process (same
run_main wrapper)."""

import os
import subprocess
import sys

import pytest

from bert_keras.errors import UserError
from bert_keras.tasks.finetuning import RunConfig, run_finetuning
from bert_keras.configs.model import get_model_config
from bert_keras.configs.tasks import TASK_PRESETS, get_task_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "run_finetuning.py")


def _run(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env,
                        cwd=ROOT, timeout=300)


@pytest.mark.slow
def test_user_errors_exit_2_without_traceback(tmp_path):
  result = _run("--task=glue/mrpc", f"--data_dir={tmp_path}", "--model=bert_tiny",
                f"--vocab_file={tmp_path}/missing.txt", f"--output_dir={tmp_path}/out")
  assert result.returncode == 2
  assert result.stderr.strip().splitlines()[-1] == (
      f"error: --data_dir={tmp_path} holds none of the glue/mrpc files (train.tsv, dev.tsv, "
      "test.tsv)")
  assert "Traceback" not in result.stderr


def test_bad_length_buckets_exit_2_with_one_line(tmp_path):
  result = _run("--task=polarity", "--model=bert_tiny", "--length_buckets=16,x",
                f"--output_dir={tmp_path}/out")
  assert result.returncode == 2, result.stderr[-2000:]
  errors = [line for line in result.stderr.splitlines() if "error:" in line]
  assert errors == ["error: --length_buckets='16,x'; expected 'auto', 'fixed' or ascending "
                    "integers like '16,32,64'"] and "Traceback" not in result.stderr
  assert not os.path.exists(tmp_path / "out")


def test_unknown_task_preset_is_a_user_error():
  # What `--task=glue/nope` reaches first in the script's main (scripts/run_finetuning.py).
  with pytest.raises(UserError, match="unknown task preset 'glue/nope'"):
    get_task_config("glue/nope")


def test_missing_task_names_the_registered_tasks(tmp_path):
  """The docstring promises the task list; absl's required-flag message alone says only that
  --task needs a value."""
  result = _run(f"--output_dir={tmp_path}/out")
  assert result.returncode == 2, result.stderr[-2000:]
  errors = [line for line in result.stderr.splitlines() if "error:" in line]
  assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
  assert "--task is required; registered tasks: " in errors[0]
  assert all(name in errors[0] for name in TASK_PRESETS), errors[0]
  assert not os.path.exists(tmp_path / "out")


@pytest.mark.parametrize("source", ["preset", "json"])
def test_random_init_without_vocab_file_asks_for_it(tmp_path, source):
  """A preset or ModelConfig JSON has no vocab.txt beside it: the error names --vocab_file and
  comes before any data is read or model built (nothing written)."""
  spec = "bert_tiny"
  if source == "json":
    spec = str(tmp_path / "tiny.json")
    with open(spec, "w") as f:
      f.write(get_model_config("bert_tiny").to_json())
  run = RunConfig(model=spec, output_dir=str(tmp_path / "out"))
  with pytest.raises(UserError, match=r"^--vocab_file is needed when no checkpoint is given: "
                                      f"--model={spec} has no vocab.txt"):
    run_finetuning(get_task_config("polarity"), run)
  assert not os.path.exists(tmp_path / "out")


def test_an_output_dir_holding_another_tasks_run_is_refused(tmp_path):
  """SQuAD's predict-mode files (predictions.json, null_odds.json) would otherwise stay beside the
  new polarity model and pass for its outputs; the exporter refuses the same case (one rule,
  bert_keras/output_task.py). Nothing is touched."""
  out = tmp_path / "squad_out"
  out.mkdir()
  (out / "config.json").write_text('{"mode": "predict", "task": {"task": "squad_v1"}}')
  (out / "predictions.json").write_text("{}")
  run = RunConfig(model="bert_tiny", output_dir=str(out))
  with pytest.raises(UserError, match=r"^--output_dir=.*squad_out holds a fine-tuning run of task "
                     r"'squad_v1', not of task 'polarity': choose another --output_dir"):
    run_finetuning(get_task_config("polarity"), run)
  assert sorted(os.listdir(out)) == ["config.json", "predictions.json"]
