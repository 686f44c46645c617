"""The absl script: a user error exits 2 with one line and no traceback (one real subprocess: the
user's view); the unknown-preset message itself is checked in-process (same run_main wrapper)."""

import os
import subprocess
import sys

import pytest

from bert_keras.errors import UserError
from configs.tasks import get_task_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "run_finetuning.py")


def _run(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env,
                        cwd=ROOT, timeout=300)


@pytest.mark.slow
def test_user_errors_exit_2_without_traceback(tmp_path):
  result = _run("--task=glue/mrpc", f"--data_dir={tmp_path}", "--model_config=bert_tiny",
                f"--vocab_file={tmp_path}/missing.txt", f"--output_dir={tmp_path}/out")
  assert result.returncode == 2
  assert result.stderr.strip().splitlines()[-1] == (
      f"error: {tmp_path}/train.tsv: no such file (the GLUE glue/mrpc train file)")
  assert "train.tsv: no such file" in result.stderr and "Traceback" not in result.stderr


def test_unknown_task_preset_is_a_user_error():
  # What `--task=glue/nope` reaches first in the script's main (scripts/run_finetuning.py).
  with pytest.raises(UserError, match="unknown task preset 'glue/nope'"):
    get_task_config("glue/nope")
