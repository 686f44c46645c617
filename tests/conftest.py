"""Test-wide settings: quiet TensorFlow logs, float32 policy restored after every test, and the
order in which `pytest -n 2 --dist loadfile` hands out files (longest first)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402

# Files that take far longer than the rest (seconds, one worker, quiet 2-core machine; mostly
# subprocess launches). With `--dist loadfile` one file runs on one worker, and xdist hands out the
# files with the most tests first, which put these one- to three-test files last: one worker ended
# alone on a long file. Handing out the longest first (then other files with `slow` tests, then the
# rest in collection order) balances the two workers. An outdated figure only changes the order.
LONG_FILES = {
    "tests/training/test_multi_worker_pretraining.py": 150,
    "tests/training/test_pretrain_resume.py": 100,
    "tests/pipeline/test_pipeline_end_to_end.py": 90,
    "tests/export/test_export_task_model.py": 80,
    "tests/gpt/test_gpt_runs.py": 80,
    "tests/text/test_bert_tokenizer.py": 60,
    "tests/tasks/test_finetuning.py": 60,
    "tests/reliability/test_script_errors_bert.py": 60,
}


def pytest_configure(config):
  if getattr(config.option, "dist", "no") == "loadfile":
    config.option.loadscopereorder = False  # keep the order set below


def pytest_collection_modifyitems(session, config, items):
  del session, config
  path = lambda item: item.nodeid.split("::")[0]
  slow = {path(item) for item in items if item.get_closest_marker("slow")}
  # Stable sort: each file's tests stay together and in their order.
  items.sort(key=lambda item: (-LONG_FILES.get(path(item), 0), path(item) not in slow))


@pytest.fixture(autouse=True)
def _float32_policy():
  yield
  keras.mixed_precision.set_global_policy("float32")
