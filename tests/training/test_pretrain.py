"""run_pretraining end to end (tiny): outputs, resume as a no-op, phase 2, user errors."""

import json
import os

import keras
import pytest
import tensorflow as tf
from tensorflow.python.framework import config as tf_config

from bert_keras.errors import UserError
from bert_keras.training.pretrain import run_pretraining
from configs.training import TrainingConfig, get_training_config
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL, read_checkpoint


def _config(pattern, model_dir, **kw):
  # One layer: each run_pretraining call traces its train and eval steps, and nothing checked here
  # depends on depth.
  values = dict(input_files=pattern, eval_input_files=pattern, model_preset="bert_tiny",
                model_overrides=dict(TINY_MODEL, num_layers=1), max_seq_length=32, max_predictions_per_seq=5,
                train_batch_size=8, num_train_steps=10, num_warmup_steps=2, learning_rate=1e-3,
                checkpoint_every=3, log_every=3, eval_steps=2, model_dir=model_dir,
                vocab_size=128, steps_per_execution=2)
  values.update(kw)
  return TrainingConfig(**values)


def test_two_phases_outputs_and_resume(tmp_path):
  pattern = write_records(str(tmp_path / "data128"), seq_length=32)
  phase1 = str(tmp_path / "phase1")
  result = run_pretraining(_config(pattern, phase1, phase=1))
  assert result["train"]["step"] == 9 and result["eval"]["step"] == 9  # 90% of 10 steps
  assert 0.0 <= result["eval"]["nsp_accuracy"] <= 1.0
  for name in ("training_config.json", "history.jsonl", "export/encoder.weights.h5",
               "export/encoder.keras", "export/model_config.json"):
    assert os.path.exists(os.path.join(phase1, name)), name
  assert json.load(open(os.path.join(phase1, "training_config.json")))["phase"] == 1
  assert os.listdir(os.path.join(phase1, "tensorboard"))
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


def test_missing_input_is_a_one_line_user_error(tmp_path):
  # The script prints this as one `error:` line with exit 2 (run_main); that path is a subprocess
  # case of tests/reliability/test_script_errors_bert.py; the script's successful runs are
  # test_pretrain_resume.py and test_multi_worker_pretraining.py.
  config = get_training_config("tiny_debug", input_files="/nonexistent/*.tfrecord",
                               model_dir=str(tmp_path))
  with pytest.raises(UserError) as error:
    run_pretraining(config)
  assert str(error.value) == "input pattern '/nonexistent/*.tfrecord' matches no file"
