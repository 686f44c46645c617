"""The files each task reads from --data_dir are named by `run_finetuning --help` and the README,
and are the files its reader opens (an empty directory's error names the first of them)."""

import os
import re
import subprocess
import sys

import pytest

from bert_keras.errors import UserError
from bert_keras.tasks.data_files import DATA_FILES
from bert_keras.configs.tasks import TASK_PRESETS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_FILE = re.compile(r"[\w.-]+\.(?:tsv|json|csv|txt|cor)\b|eng\.(?:train|testa|testb)\b")


def _names(task):
  return _FILE.findall(DATA_FILES[task])


def test_every_task_has_its_files_in_help_and_readme():
  # A GPT-1 task (gpt/<task>) reads the files of the task it is built on.
  assert sorted(DATA_FILES) == sorted({name.removeprefix("gpt/") for name in TASK_PRESETS})
  run = subprocess.run([sys.executable, "scripts/run_finetuning.py", "--helpfull"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT))
  assert run.returncode == 0, run.stderr[-2000:]
  with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    readme = f.read()
  for task in DATA_FILES:
    assert _names(task), task
    for name in _names(task):
      assert f"{task}: " in run.stdout and name in run.stdout, (task, name)
      assert f"`{name}`" in readme, (task, name)


@pytest.mark.parametrize("task", sorted(DATA_FILES))
def test_the_reader_opens_the_first_named_file(task, tmp_path):
  from bert_keras.tasks.registry import get_task  # pylint: disable=import-outside-toplevel
  from bert_keras.configs.tasks import get_task_config  # pylint: disable=import-outside-toplevel

  reader = get_task(get_task_config(task))
  with pytest.raises(UserError, match=re.escape(_names(task)[0])):
    reader.read_examples(str(tmp_path), "train")
