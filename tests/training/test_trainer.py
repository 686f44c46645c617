"""Trainer: gradient accumulation equals the big batch (one device and the default strategy; the
two-replica MirroredStrategy case is test_mirrored_accumulation.py, two workers
test_multi_worker_pretraining.py), unused variables stay untouched, mixed precision steps, and a
clipped mixed_float16 step (loss scaling) equals the float32 step."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training import precision
from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_input import make_dataset
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from bert_keras.configs.training import TrainingConfig
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=2, per_file=32)


def _accumulation_weights(strategy, config, accum, model_dir):
  """(initial, final) weights after 3 steps of 8 examples: one batch (accum=1) or 4 x 2."""
  keras.utils.set_random_seed(1)
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  initial = [np.asarray(v.numpy()) for v in model.weights]
  run = config.override(output_dir=model_dir, train_batch_size=8, gradient_accumulation_steps=accum,
                        checkpoint_every=100, log_every=100, seed=3)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.model.objective), run)
  data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                        skip_batches=skip)
  trainer.train(data, 3)
  return initial, [np.asarray(v.numpy()) for v in model.weights]


@pytest.mark.slow
@pytest.mark.parametrize("strategy_name", ["one_device", "default"])
def test_accumulated_micro_batches_equal_one_big_batch(pattern, tmp_path, strategy_name):
  """4 micro-batches of 2 vs one batch of 8, on one device and under the default strategy (what
  --distribution=default runs: its replica context's all-reduce is a no-op). Two mirrored replicas
  accumulating, and the ltr objective, are test_mirrored_accumulation.py; two workers are
  test_multi_worker_pretraining.py. One layer: accumulation does not depend on depth."""
  objective = "mlm_nsp"
  strategy = (tf.distribute.OneDeviceStrategy("/cpu:0") if strategy_name == "one_device"
              else tf.distribute.get_strategy())
  config = TrainingConfig.from_flat(
      input_files=pattern, model="bert_tiny", objective=objective,
      model_overrides=dict(TINY_MODEL, num_layers=1, dropout_rate=0.0, attention_dropout_rate=0.0),
      max_seq_length=32, max_predictions_per_seq=5, train_batch_size=8, num_train_steps=10,
      num_warmup_steps=1, learning_rate=1e-2,
      clip_global_norm=0.5)  # a low norm so that clipping is active and tested too
  initial, big = _accumulation_weights(strategy, config, 1, str(tmp_path / "big"))
  _, small = _accumulation_weights(strategy, config, 4, str(tmp_path / "accum"))
  assert max(float(np.max(np.abs(a - b))) for a, b in zip(big, initial)) > 1e-3  # it trained
  diff = max(float(np.max(np.abs(a - b))) for a, b in zip(big, small))
  assert diff < 2e-6, diff  # float32 summation order only (lr 1e-2, 3 steps)


def _config(pattern, **kw):
  # One layer: nothing checked below depends on depth, and every test traces a train step.
  return TrainingConfig.from_flat(input_files=pattern, model="bert_tiny",
                        model_overrides=dict(TINY_MODEL, num_layers=1), max_seq_length=32,
                        max_predictions_per_seq=5, train_batch_size=8, num_train_steps=4,
                        num_warmup_steps=1, learning_rate=1e-3, **kw)


def _train(config, model_dir, steps=2):
  strategy = tf.distribute.get_strategy()
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  run = config.override(output_dir=model_dir, train_batch_size=8, log_every=1, seed=0)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.model.objective), run)
  before = {v.path: v.numpy().copy() for v in model.trainable_variables}
  data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                        skip_batches=skip)
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
    before, after, history = _train(_config(pattern, mixed_precision=policy), str(tmp_path))
  finally:
    precision.set_precision("float32")
  assert all(np.isfinite(r["loss"]) for r in history)
  (embedding,) = [p for p in before if p.endswith("token_embedding/embeddings")]
  assert not np.array_equal(before[embedding], after[embedding])


def _one_step_weights(config, policy, model_dir):
  """(initial, after one step) weights of a model built under `policy` from seed 1."""
  precision.set_precision(policy)
  try:
    keras.utils.set_random_seed(1)
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
      model = build_pretrainer(config)
      optimizer = build_optimizer(config.override(mixed_precision=policy))
    initial = {v.path: v.numpy().copy() for v in model.trainable_variables}
    run = config.override(output_dir=model_dir, train_batch_size=8, log_every=1, seed=3)
    trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.model.objective), run)
    data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                          skip_batches=skip)
    trainer.train(data, 1)
  finally:
    precision.set_precision("float32")
  return initial, {v.path: v.numpy() for v in model.trainable_variables}


@pytest.mark.parametrize("optimizer", ["adamw", "adam"])  # FusedAdamW's clip factor; Keras' Adam
def test_clipping_under_loss_scaling_matches_float32(pattern, tmp_path, optimizer):
  """A clipped mixed_float16 step (dynamic loss scale 2**15) equals the float32 step to float16's
  precision: the clip limit must be scaled like the gradient it clips. A limit that ignores the
  scale shrinks the float16 update ~2**15-fold.

  The clip norm is far below the gradient's, so clipping decides the update's size. Adam's first
  step is lr * g / (|g| + epsilon): with the default epsilon it is lr * sign(g) whatever the clip
  factor; epsilon 1.0, far above the clipped gradient's entries, makes the step proportional to
  the clipped gradient, so a wrong clip factor shows in the weights."""
  config = _config(pattern, optimizer=optimizer, epsilon=1.0, clip_global_norm=0.01).override(
      learning_rate=1.0, num_warmup_steps=0,
      model_overrides=dict(TINY_MODEL, num_layers=1, dropout_rate=0.0, attention_dropout_rate=0.0))
  initial32, after32 = _one_step_weights(config, "float32", str(tmp_path / "float32"))
  initial16, after16 = _one_step_weights(config, "mixed_float16", str(tmp_path / "float16"))
  assert all(np.array_equal(initial32[p], initial16[p]) for p in initial32)  # the same start
  moved = max(float(np.max(np.abs(after32[p] - initial32[p]))) for p in initial32)
  diff = max(float(np.max(np.abs(after32[p] - after16[p]))) for p in initial32)
  assert moved > 1e-6, moved  # the step changed the weights
  assert diff < 0.05 * moved, (diff, moved)  # float16's rounding of the gradient only


def test_optimizer_that_clips_is_rejected(pattern, tmp_path):
  model = build_pretrainer(_config(pattern))
  with pytest.raises(ValueError, match="must not clip"):
    Trainer(tf.distribute.get_strategy(), model, keras.optimizers.Adam(global_clipnorm=1.0),
            PretrainingTask(), _config(pattern, output_dir=str(tmp_path)))
