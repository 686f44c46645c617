"""run_pretraining end to end (tiny): outputs, resume as a no-op, phase 2, user errors."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import config as tf_config

from bert_keras.errors import UserError
from bert_keras.training.optimization import WarmupDecaySchedule
from bert_keras.training.pretrain import run_pretraining
from bert_keras.configs.training import TrainingConfig
from configs import recipe_path
from tests.tensorboard_events import scalar_events
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL, read_checkpoint


def _config(pattern, model_dir, **kw):
  # One layer: each run_pretraining call traces its train and eval steps, and nothing checked here
  # depends on depth.
  values = dict(input_files=pattern, eval_input_files=pattern, model="bert_tiny",
                model_overrides=dict(TINY_MODEL, num_layers=1), max_seq_length=32, max_predictions_per_seq=5,
                train_batch_size=8, num_train_steps=10, num_warmup_steps=2, learning_rate=1e-3,
                checkpoint_every=3, log_every=3, eval_steps=2, output_dir=model_dir,
                vocab_size=128, steps_per_execution=2)
  values.update(kw)
  return TrainingConfig.from_flat(**values)


TRAIN_TAGS = ("loss", "mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy", "learning_rate",
              "steps_per_sec", "sequences_per_sec")


def _check_train_summaries(model_dir, config):
  """TensorBoard has every train scalar at every logged step (log_every=3 of phase 1's 9), equal
  to history.jsonl's; learning_rate is the schedule's rate of the step just taken (step k is
  update k, made at the schedule's step k - 1)."""
  scalars = scalar_events(os.path.join(model_dir, "tensorboard"))
  rows = {r["step"]: r for r in map(json.loads, open(os.path.join(model_dir, "history.jsonl")))
          if r["split"] == "train"}
  assert sorted(rows) == [3, 6, 9], sorted(rows)
  schedule = WarmupDecaySchedule(config.optimizer.learning_rate, config.optimizer.num_train_steps,
                                 config.optimizer.num_warmup_steps)
  for tag in TRAIN_TAGS:
    values = scalars.get(f"train/{tag}")
    assert values is not None and sorted(values) == [3, 6, 9], (tag, sorted(scalars))
    for step, value in values.items():
      assert np.isclose(value, rows[step][tag], rtol=1e-6), (tag, step, value, rows[step][tag])
  for step, value in scalars["train/learning_rate"].items():
    assert np.isclose(value, float(schedule(step - 1)), rtol=1e-6), (step, value)
  for step in (3, 6, 9):
    assert np.isclose(scalars["train/loss"][step],
                      scalars["train/mlm_loss"][step] + scalars["train/nsp_loss"][step], rtol=1e-5)
    assert 0.0 <= scalars["train/mlm_accuracy"][step] <= 1.0
    assert 0.0 <= scalars["train/nsp_accuracy"][step] <= 1.0
    assert scalars["train/steps_per_sec"][step] > 0
    assert np.isclose(scalars["train/sequences_per_sec"][step],
                      config.data.train_batch_size * scalars["train/steps_per_sec"][step], rtol=1e-5)


def test_two_phases_outputs_and_resume(tmp_path):
  pattern = write_records(str(tmp_path / "data128"), seq_length=32)
  phase1 = str(tmp_path / "phase1")
  result = run_pretraining(_config(pattern, phase1, phase=1))
  _check_train_summaries(phase1, _config(pattern, phase1, phase=1))
  assert result["train"]["step"] == 9 and result["eval"]["step"] == 9  # 90% of 10 steps
  assert 0.0 <= result["eval"]["nsp_accuracy"] <= 1.0
  for name in ("training_config.json", "history.jsonl", "export/encoder.weights.h5",
               "export/encoder.keras", "export/model_config.json"):
    assert os.path.exists(os.path.join(phase1, name)), name
  assert json.load(open(os.path.join(phase1, "training_config.json")))["optimizer"]["phase"] == 1
  encoder = keras.saving.load_model(os.path.join(phase1, "export", "encoder.keras"))
  assert encoder.model_config.hidden_size == TINY_MODEL["hidden_size"]
  # Restarting a finished run trains nothing more.
  again = run_pretraining(_config(pattern, phase1, phase=1))
  assert "train" not in again and read_checkpoint(phase1)["global_step/.ATTRIBUTES/VARIABLE_VALUE"] == 9

  # Phase 2: longer sequences, continues the schedule (step 9 -> 10) from the phase-1 checkpoint.
  longer = write_records(str(tmp_path / "data512"), seq_length=64, max_predictions=10)
  phase2 = str(tmp_path / "phase2")
  result = run_pretraining(_config(longer, phase2, phase=2, init_checkpoint=phase1,
                                   max_seq_length=64, max_predictions_per_seq=10))
  assert result["train"]["step"] == 10
  state = read_checkpoint(phase2)
  assert state["data_start_step/.ATTRIBUTES/VARIABLE_VALUE"] == 9


def test_ltr_objective_runs(tmp_path):
  pattern = write_records(str(tmp_path / "data"), seq_length=32)
  result = run_pretraining(_config(pattern, str(tmp_path / "ltr"), objective="ltr",
                                   num_train_steps=3, jit_compile=True, deterministic=True))
  assert result["train"]["step"] == 3 and "nsp_loss" not in result["train"]
  # Op determinism is process-wide: the run turns it off again, so later unseeded ops still work.
  assert not tf_config.is_op_determinism_enabled()
  tf.random.uniform([2])


class _DatasetRequested(Exception):
  """Stops a run at its first input pipeline, once the test has seen how it was asked for."""


@pytest.mark.parametrize("dynamic", [False, True])
def test_dynamic_masking_reaches_the_input_pipeline(tmp_path, monkeypatch, dynamic):
  """run_pretraining asks make_dataset for the training stream with the config's masking settings
  (the re-masking itself is test_pretraining_input.py's). Stopped at that call: no step runs."""
  from bert_keras.training import pretrain  # pylint: disable=import-outside-toplevel
  calls = []

  def requested(config, files, **kwargs):
    calls.append((config, kwargs))
    raise _DatasetRequested()

  monkeypatch.setattr(pretrain, "make_dataset", requested)
  pattern = write_records(str(tmp_path / "data"), num_files=1, per_file=16, seq_length=32)
  config = _config(pattern, str(tmp_path / "run"), eval_input_files="", dynamic_masking=dynamic,
                   masked_lm_prob=0.2, mask_token_id=100)
  with pytest.raises(_DatasetRequested):
    run_pretraining(config)
  ((read, kwargs),) = calls
  assert kwargs["training"] is True
  assert read.data.dynamic_masking is dynamic
  assert (read.data.masked_lm_prob, read.data.mask_token_id, read.masking_vocab_size()) == (
      0.2, 100, 128)
  assert read.runtime.seed == config.runtime.seed


def test_missing_input_is_a_one_line_user_error(tmp_path):
  # The script prints this as one `error:` line with exit 2 (run_main); that path is a subprocess
  # case of tests/reliability/test_script_errors_bert.py; the script's successful runs are
  # test_pretrain_resume.py and test_multi_worker_pretraining.py.
  config = TrainingConfig.from_file(recipe_path("training", "tiny_debug")).override(
      input_files="/nonexistent/*.tfrecord", output_dir=str(tmp_path))
  with pytest.raises(UserError) as error:
    run_pretraining(config)
  assert str(error.value) == "input pattern '/nonexistent/*.tfrecord' matches no file"
