"""LAMB under mixed_float16, where build_optimizer wraps it in Keras' LossScaleOptimizer: a clipped
step equals the float32 step to float16's precision (the Trainer clips the still-scaled gradient at
the equally scaled limit), and a step whose gradient overflows is skipped, LAMB's weights, slots
and step count untouched and the loss scale halved."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training import precision
from bert_keras.training.lamb import Lamb
from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_input import make_dataset
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from tests.training import lamb_probe
from tests.training.pretraining_records import write_records

EXCLUDED = ("bias", "output_bias", "gamma", "beta")  # last path parts: no decay, no trust ratio
# |float16 step - float32 step| / (the float32 step's largest movement), per group of variables.
# float16 carries 11 significant bits (unit roundoff 4.9e-4) through the activations and their
# gradients; measured 2.6e-4 (adapted) and 5.6e-4 (excluded). A clip limit that ignores the loss
# scale gives 0.43 and 1.0.
TOL = 1e-2


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=2, per_file=16)


def _run(cfg, policy, model_dir, **kwargs):
  """lamb_probe.run, one step, with the model and optimizer built under `policy`; also "trainer"."""
  held = []
  precision.set_precision(policy)
  try:
    out = lamb_probe.run(tf.distribute.get_strategy(), cfg.override(mixed_precision=policy), model_dir,
                         steps=1, prepare=held.append, **kwargs)
  finally:
    precision.set_precision("float32")
  return dict(out, trainer=held[0])


def test_clipped_float16_step_matches_float32(pattern, tmp_path):
  """The clip norm is far below the gradient's, so clipping decides the update. LAMB's first step
  is lr r (m_hat / (sqrt(v_hat) + epsilon) + wd w): with BERT's epsilon, m_hat / sqrt(v_hat) is
  sign(g) whatever the clip factor, and the trust ratio r rescales it anyway. epsilon 1.0, far above
  the clipped gradient's entries, makes the Adam part proportional to the clipped gradient: the
  excluded variables (no ratio) move by about lr g_clipped, and in the adapted ones the clipped gradient
  competes with wd w, so a wrong clip factor turns their update's direction. lr 1.0 moves the
  LayerNorm weights (~1.0) by ~400 float32 ulps, so their rounding does not count."""
  cfg = lamb_probe.config(pattern).override(learning_rate=1.0, epsilon=1.0, clip_global_norm=0.01)
  full = _run(cfg, "float32", str(tmp_path / "float32"), first_gradients=True)
  half = _run(cfg, "mixed_float16", str(tmp_path / "float16"))
  optimizer = half["trainer"].optimizer
  assert isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
  assert type(optimizer.inner_optimizer) is Lamb
  assert half["trainer"].model.dtype_policy.name == "mixed_float16"
  # A finite step at the initial scale, applied once (no growth, no skip).
  assert float(optimizer.dynamic_scale.numpy()) == 2.0 ** 15
  assert int(optimizer.inner_optimizer.iterations.numpy()) == 1
  norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in full["gradients"].values()))
  assert norm > 10 * cfg.optimizer.clip_global_norm, norm  # the clip decides the update's size
  assert all(np.array_equal(full["initial"][k], half["initial"][k]) for k in full["initial"])
  used = [k for k in full["initial"] if k not in full["unused"]]
  for excluded in (True, False):
    group = [k for k in used if (k.rsplit("/", 1)[-1] in EXCLUDED) == excluded]
    assert group
    moved = max(float(np.max(np.abs(full["final"][k] - full["initial"][k]))) for k in group)
    diff = max(float(np.max(np.abs(full["final"][k] - half["final"][k]))) for k in group)
    assert moved > 1e-5, (excluded, moved)  # the step changed the weights
    assert diff < TOL * moved, (excluded, diff, moved)


def test_overflow_step_is_skipped(pattern, tmp_path):
  """One finite step (non-zero slots), then a loss scale of 2**100: float16 activation gradients
  overflow to inf. The Trainer's clip turns the gradients NaN (tf.clip_by_global_norm of an
  infinite norm) and the LossScaleOptimizer must skip LAMB: weights, moments and LAMB's step count
  unchanged, the scale halved, the growth counter reset; the Trainer's step still advances."""
  cfg = lamb_probe.config(pattern).override(mixed_precision="mixed_float16")
  precision.set_precision("mixed_float16")
  try:
    keras.utils.set_random_seed(1)
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
      model = build_pretrainer(cfg)
      optimizer = build_optimizer(cfg)
  finally:
    precision.set_precision("float32")
  task = PretrainingTask(cfg.model.objective)
  run = cfg.override(output_dir=str(tmp_path), train_batch_size=lamb_probe.BATCH,
                     checkpoint_every=100, log_every=100, seed=3)
  trainer = Trainer(strategy, model, optimizer, task, run)
  data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                        skip_batches=skip)
  inner = optimizer.inner_optimizer
  assert type(inner) is Lamb
  state = lambda: {v.path: np.array(v.numpy()) for v in model.trainable_variables + inner.variables}
  initial = state()
  trainer.train(data, 1)
  before = state()
  assert int(inner.iterations.numpy()) == 1 and int(optimizer.step_counter.numpy()) == 1
  moments = [v.path for v in inner.variables if v.path.endswith(("_momentum", "_velocity"))]
  assert len(moments) == 2 * len(model.trainable_variables)
  assert any(np.any(before[k]) for k in moments)  # the slots hold something to lose
  assert any(not np.array_equal(before[k], initial[k]) for k in before)

  optimizer.dynamic_scale.assign(2.0 ** 100)
  batch = next(iter(data(tf.distribute.InputContext(), 1)))  # the batch the next step takes
  flat = {k: tf.reshape(v, [-1] + v.shape.as_list()[2:]) for k, v in batch.items()}
  grads, _ = trainer._accumulated_grads(batch, task.counts(flat))  # pylint: disable=protected-access
  assert any(np.isinf(g.numpy()).any() for g in grads)  # the overflow really happens
  trainer.train(data, 2)
  after = state()
  for k in before:
    np.testing.assert_array_equal(after[k], before[k], err_msg=k)
  assert int(inner.iterations.numpy()) == 1
  assert float(optimizer.dynamic_scale.numpy()) == 2.0 ** 99
  assert int(optimizer.step_counter.numpy()) == 0
  assert int(trainer.global_step.numpy()) == 2
