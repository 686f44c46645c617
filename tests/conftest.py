"""Test-wide settings: quiet TensorFlow logs, float32 policy restored after every test, and the
order in which `pytest -n 2 --dist loadfile` hands out files (longest first)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402

# Seconds per test file: the sum of the file's items >= 19 s in the `make test` log of 2026-11-27
# (`--durations=30`, CI, 2 cores, 1,360 tests in 1,432 s), each kept at the earlier, fuller figure
# of 2026-11-22 (`--durations=60`, items >= 10 s, quiet 2-core machine) when that one is larger; the
# files with no item in either list at the CI log's estimates of their share (README blocks, entry
# points, compat fixtures). Changed since: test_pipeline_end_to_end now also runs the real pipeline
# under kfp.local, beside the one local run it shares with the end-to-end test (was
# test_kfp_local_run's: 147 s, with its own local run), and test_bench_smoke fine-tunes bert_tiny
# instead of MiniLM (84 s -> about 40 s). With `--dist loadfile` one file runs on one worker; xdist
# hands out the files with the most tests first, which put these few-test files last and left one
# worker alone on a long file. Handing out the longest first (greedy longest-first balancing), then
# the other files with `slow` tests, then the rest in collection order, balances the two workers.
# An outdated figure only changes the order; re-measure with `--durations=0`.
DURATIONS = {
    "tests/pipeline/test_pipeline_end_to_end.py": 190,
    "tests/export/test_export_task_model.py": 165,
    "tests/training/test_multi_worker_pretraining.py": 161,
    "tests/bench/test_bench_smoke.py": 125,
    "tests/project/test_readme_code_blocks.py": 120,
    "tests/tasks/test_heads.py": 97,
    "tests/training/test_pretrain_resume.py": 94,
    "tests/reliability/test_flags_before_heavy_imports.py": 90,
    "tests/training/test_mirrored_accumulation.py": 88,
    "tests/training/test_trainer.py": 80,
    "tests/tasks/test_finetuning.py": 76,
    "tests/reliability/test_fuzz_serving.py": 66,
    "tests/training/test_pretrain.py": 62,
    "tests/compat/test_saved_files.py": 60,
    "tests/interop/test_pretraining_handoff.py": 60,
    "tests/text/test_bert_tokenizer.py": 56,
    "tests/reliability/test_script_errors_bert.py": 56,
    "tests/gpt/test_gpt_runs.py": 30,
    "tests/reliability/test_script_errors_other.py": 47,
    "tests/export/test_export_scripts.py": 44,
    "tests/training/test_input_file_errors.py": 44,
    "tests/training/test_fused_adamw.py": 38,
    "tests/export/test_ner_doc_stride.py": 38,
    "tests/training/test_train_step_reference.py": 35,
    "tests/training/test_trainer_logging.py": 32,
    "tests/training/test_lamb.py": 31,
    "tests/studies/test_ablation_runs.py": 31,
    "tests/training/test_lamb_accumulation.py": 30,
    "tests/training/test_multi_worker_model_dir.py": 30,
    "tests/export/test_export_encoder_checkpoint.py": 27,
    "tests/export/test_export_bad_input.py": 25,
    "tests/training/test_lm_metric_names.py": 21,
    "tests/tasks/test_finetuning_bad_input.py": 21,
    "tests/training/test_resume_integrity.py": 21,
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
