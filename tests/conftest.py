"""Test-wide settings: quiet TensorFlow logs, float32 policy restored after every test, and the
order in which `pytest -n 2 --dist loadfile` hands out files (longest first)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402

# Seconds per test file, measured: the sum of the file's items in `pytest -n 2 --dist loadfile
# --durations=60` (items >= 10 s) of the CI run of 2026-11-22 03:44 UTC on a quiet 2-core machine,
# and for test_pretrain_resume, test_export_task_model and test_trainer, trimmed after that run,
# that figure scaled by their measured CPU-second ratio (after/before, `/usr/bin/time -v` on one
# file; test_multi_worker_pretraining and test_pretrain were trimmed too, not yet re-measured). With `--dist loadfile` one file runs on one
# worker; xdist hands out the files with the most tests first, which put these few-test files last
# and left one worker alone on a long file. Handing out the longest first (greedy longest-first
# balancing), then the other files with `slow` tests, then the rest in collection order, balances
# the two workers. An outdated figure only changes the order; re-measure with `--durations=60`.
DURATIONS = {
    "tests/export/test_export_task_model.py": 165,
    "tests/training/test_multi_worker_pretraining.py": 161,
    "tests/pipeline/test_pipeline_end_to_end.py": 123,
    # Not yet timed on a quiet machine: its CPU seconds (user + sys) under a load average of 13.
    "tests/pipeline/test_kfp_local_run.py": 158,
    "tests/tasks/test_heads.py": 97,
    "tests/training/test_pretrain_resume.py": 94,
    "tests/training/test_mirrored_accumulation.py": 88,
    "tests/training/test_trainer.py": 80,
    "tests/tasks/test_finetuning.py": 76,
    "tests/reliability/test_fuzz_serving.py": 66,
    "tests/training/test_pretrain.py": 62,
    "tests/text/test_bert_tokenizer.py": 56,
    "tests/reliability/test_script_errors_bert.py": 56,
    "tests/gpt/test_gpt_runs.py": 55,
    "tests/reliability/test_script_errors_other.py": 47,
    "tests/export/test_export_scripts.py": 44,
    "tests/training/test_train_step_reference.py": 35,
    "tests/export/test_ner_doc_stride.py": 38,
    "tests/export/test_export_encoder_checkpoint.py": 27,
    "tests/training/test_heldout_evaluation.py": 19,
    "tests/models/test_bert_encoder.py": 18,
    "tests/gpt/test_gpt_decoder.py": 16,
    "tests/interop/test_convert_checkpoint.py": 13,
}


def pytest_configure(config):
  if getattr(config.option, "dist", "no") == "loadfile":
    config.option.loadscopereorder = False  # keep the order set below


def pytest_collection_modifyitems(session, config, items):
  del session, config
  path = lambda item: item.nodeid.split("::")[0]
  slow = {path(item) for item in items if item.get_closest_marker("slow")}
  # Stable sort: each file's tests stay together and in their order.
  items.sort(key=lambda item: (-DURATIONS.get(path(item), 0), path(item) not in slow))


@pytest.fixture(autouse=True)
def _float32_policy():
  yield
  keras.mixed_precision.set_global_policy("float32")
