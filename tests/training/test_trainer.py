"""Trainer: gradient accumulation equals the big batch under several strategies (subprocess probe,
two logical CPUs), unused variables stay untouched, mixed precision steps."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training import precision
from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_input import make_dataset
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from configs.training import TrainingConfig
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import ROOT, TINY_MODEL, env


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=2, per_file=32)


@pytest.mark.slow
def test_accumulated_micro_batches_equal_one_big_batch(pattern, tmp_path):
  done = subprocess.run([sys.executable, "-m", "tests.training.accumulation_probe", pattern,
                         str(tmp_path)], env=env(), cwd=ROOT, capture_output=True, text=True,
                        timeout=1200)
  assert done.returncode == 0, done.stderr[-3000:]
  diffs = json.loads(done.stdout.strip().splitlines()[-1])
  assert set(diffs) == {"mlm_nsp/default", "mlm_nsp/one_device", "mlm_nsp/mirrored_2_replicas",
                        "ltr/default"}
  for name, diff in diffs.items():
    assert diff < 2e-6, (name, diff)  # float32 summation order only (lr 1e-2, 3 steps)


def _config(pattern, **kw):
  return TrainingConfig(input_files=pattern, model_preset="bert_tiny",
                        model_overrides=dict(TINY_MODEL), max_seq_length=32,
                        max_predictions_per_seq=5, train_batch_size=8, num_train_steps=4,
                        num_warmup_steps=1, learning_rate=1e-3, **kw)


def _train(config, model_dir, steps=2):
  strategy = tf.distribute.get_strategy()
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.objective),
                    model_dir=model_dir, global_batch_size=8, log_every=1)
  before = {v.path: v.numpy().copy() for v in model.trainable_variables}
  data = lambda ctx, skip: make_dataset(config.input_files, seq_length=32, max_predictions=5,
                                        batch_size=8, objective=config.objective,
                                        input_context=ctx, skip_batches=skip)
  history = trainer.train(data, steps)
  after = {v.path: v.numpy() for v in model.trainable_variables}
  return before, after, history


def test_variables_the_objective_does_not_use_are_not_updated(pattern, tmp_path):
  before, after, history = _train(_config(pattern, objective="mlm"), str(tmp_path))
  pooler = [p for p in before if "pooler" in p]
  assert pooler and all(np.array_equal(before[p], after[p]) for p in pooler)  # no decay either
  (embedding,) = [p for p in before if p.endswith("token_embedding/embeddings")]
  assert not np.array_equal(before[embedding], after[embedding])
  assert [r["step"] for r in history] == [1, 2] and "nsp_loss" not in history[0]


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_trains(pattern, tmp_path, policy):
  precision.set_precision(policy)
  try:
    before, after, history = _train(_config(pattern, precision=policy), str(tmp_path))
  finally:
    precision.set_precision("float32")
  assert all(np.isfinite(r["loss"]) for r in history)
  (embedding,) = [p for p in before if p.endswith("token_embedding/embeddings")]
  assert not np.array_equal(before[embedding], after[embedding])


def test_optimizer_that_clips_is_rejected(pattern, tmp_path):
  model = build_pretrainer(_config(pattern))
  with pytest.raises(ValueError, match="must not clip"):
    Trainer(tf.distribute.get_strategy(), model, keras.optimizers.Adam(global_clipnorm=1.0),
            PretrainingTask(), model_dir=str(tmp_path), global_batch_size=8)
