"""FusedAdamW (one fused XLA update per variable) computes what keras AdamW computes: weights and slots after several
steps, weight-decay exclusions, mixed-precision wrapping, checkpoints in both directions, and a
two-replica MirroredStrategy (subprocess probe: two logical CPUs). (The step's scalars made once
per dtype, not per variable: bench/check_graphs.py.)"""

import contextlib
import json
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training.fused_adamw import FusedAdamW
from bert_keras.configs.training import OptimizerConfig
from bert_keras.training.optimization import create_optimizer
from tests.training import fused_adamw_probe as probe
from tests.training.pretraining_runs import ROOT, env

STRATEGY = tf.distribute.get_strategy()
STEPS = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  """{fused: (state after STEPS steps, initial state, fused kernel ran, checkpoint at step 2)}."""
  out = {}
  for fused in (True, False):
    directory = tmp_path_factory.mktemp("ckpt")
    run = probe.train(STRATEGY, fused, STEPS, probe.EXACT_BETAS, save_at=2,
                      save_prefix=str(directory / "ckpt"))
    out[fused] = run + (tf.train.latest_checkpoint(str(directory)),)
  return out


def test_create_optimizer_defaults_to_fused_and_keeps_plain_keras():
  config = OptimizerConfig(learning_rate=1e-4, num_train_steps=10, num_warmup_steps=1)
  fused, plain = create_optimizer(config), create_optimizer(config, fused=False)
  assert type(fused) is FusedAdamW and type(plain) is keras.optimizers.AdamW
  assert fused.name == plain.name == "adam_w"
  assert keras.optimizers.deserialize(
      keras.optimizers.serialize(fused)).get_config() == fused.get_config()


def test_matches_keras_adamw_and_uses_the_fused_kernel(runs):
  fused, initial, ran, _ = runs[True]
  plain, _, plain_ran, _ = runs[False]
  assert ran and not plain_ran
  assert probe.max_change(fused, initial) > 1e-3  # the steps really moved the weights
  assert probe.max_scaled_difference(fused, plain) <= probe.KERAS_TOLERANCE, (
      probe.relative_differences(fused, plain))


def test_paper_betas_are_adam_to_float32_rounding():
  # With beta2 = 0.999, Keras' float32 bias correction 1 - float32(0.999)^t is ~1e-5 off (t = 1)
  # and TensorFlow's Adam kernel (earlier versions) forms 1 - float32(beta2) for the velocity:
  # both leave the float64 algorithm by ~1e-6 relative in the weights; FusedAdamW stays within
  # float32 rounding of it. Keras as given is the control that this measure sees those errors.
  def apply(optimizer):
    variable = tf.Variable(np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(3, 4))
    for scale in (1.0, -0.5, 2.0):
      optimizer.apply_gradients([(tf.fill((3, 4), scale) * variable, variable)])
    velocity, = [v for v in optimizer.variables if v.path.endswith("velocity")]
    return variable.numpy(), velocity.numpy()

  lr, wd, eps, b1, b2 = 0.01, 0.1, 1e-6, 0.9, 0.999
  w = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(3, 4).astype("float64")
  m = v = np.zeros_like(w)
  for t, scale in enumerate((1.0, -0.5, 2.0), 1):  # AdamW in float64, the module's formulas
    g = scale * w
    w = w - lr * wd * w
    m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
  relative = lambda got, want: np.max(np.abs(got - want) / np.abs(want))
  kw = dict(learning_rate=lr, weight_decay=wd, epsilon=eps, beta_1=b1, beta_2=b2)
  fused = apply(FusedAdamW(**kw))
  keras_adamw = apply(keras.optimizers.AdamW(**kw))
  assert relative(fused[0], w) < 5e-7 and relative(fused[1], v) < 5e-7
  assert relative(keras_adamw[0], w) > 1e-6 and relative(keras_adamw[1], v) > 1e-6


def test_gradient_scale_applies_the_scaled_gradients():
  # What the Trainer's clipping relies on: the scale is folded into the update, never skipped or
  # applied twice (the sparse embedding gradient included).
  def apply(optimizer, scale):
    model, _ = probe.build(True, probe.EXACT_BETAS)
    x, y = probe.data()
    for _ in range(3):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum((model(x, training=True) - y) ** 2)
      grads = tape.gradient(loss, model.trainable_variables)
      if scale is None:
        quarter = [tf.IndexedSlices(g.values * 0.25, g.indices, g.dense_shape)
                   if isinstance(g, tf.IndexedSlices) else g * 0.25 for g in grads]
        optimizer.apply_gradients(zip(probe.dense_for_keras(quarter), model.trainable_variables))
      else:
        with optimizer.gradient_scale(tf.constant(scale)):
          optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return {v.path: v.numpy() for v in model.trainable_variables}
  kw = dict(learning_rate=0.01, weight_decay=0.1, beta_1=probe.EXACT_BETAS[0],
            beta_2=probe.EXACT_BETAS[1])
  scaled = apply(FusedAdamW(**kw), 0.25)
  reference = apply(keras.optimizers.AdamW(**kw), None)
  unscaled = apply(FusedAdamW(**kw), 1.0)
  assert probe.max_scaled_difference(scaled, reference) <= probe.KERAS_TOLERANCE
  assert probe.max_scaled_difference(unscaled, reference) > 1e-3


def test_gradient_scale_fails_loudly_if_keras_stops_passing_the_learning_rate(monkeypatch):
  # The Keras contract the scale rides on (fused_adamw.py): _backend_update_step's learning_rate
  # reaches update_step unchanged. A Keras whose update reads the learning rate afresh instead
  # must make gradient_scale raise, not train silently unclipped.
  from keras.src.backend.tensorflow.optimizer import TFOptimizer  # the Keras code in question

  def update_reading_the_rate_afresh(self, grads, trainable_variables, learning_rate):
    del learning_rate
    for grad, variable in zip(grads, trainable_variables):
      self.update_step(grad, variable, self.learning_rate)

  monkeypatch.setattr(TFOptimizer, "_backend_update_step", update_reading_the_rate_afresh)
  variable = tf.Variable(tf.ones((2, 3)))
  optimizer = FusedAdamW(learning_rate=0.01, weight_decay=0.1)
  optimizer.apply_gradients([(tf.ones((2, 3)), variable)])  # no scale: nothing to deliver
  before = variable.numpy()
  with pytest.raises(RuntimeError, match="no update_step received the scale"):
    with optimizer.gradient_scale(tf.constant(0.5)):
      optimizer.apply_gradients([(tf.ones((2, 3)), variable)])
  assert not np.array_equal(variable.numpy(), before)  # the update ran, without the scale
  monkeypatch.undo()
  with optimizer.gradient_scale(tf.constant(0.5)):  # Keras as it is: delivered, no error
    optimizer.apply_gradients([(tf.ones((2, 3)), variable)])


def test_weight_decay_skips_layer_norm_and_biases():
  model, optimizer = probe.build(True, probe.PAPER_BETAS, weight_decay=0.1, warmup=0)
  before = {v.path: v.numpy() for v in model.trainable_variables}
  lr = float(optimizer.learning_rate)
  zeros = [tf.zeros_like(v) for v in model.trainable_variables]
  optimizer.apply_gradients(zip(zeros, model.trainable_variables))  # Adam moves nothing: decay only
  for v in model.trainable_variables:
    excluded = any(s in v.path for s in ("layer_norm", "bias"))
    expected = before[v.path] if excluded else before[v.path] - before[v.path] * 0.1 * lr
    np.testing.assert_allclose(v.numpy(), expected, rtol=1e-6, atol=0, err_msg=v.path)
  assert not np.allclose(model.get_layer("dense").kernel.numpy(), before["dense/kernel"])


def test_loss_scale_optimizer_wrapping_matches_keras(runs):
  # float32 under a power-of-two loss scale: scaling and unscaling the gradient are exact.
  scaled, initial, ran = probe.train(STRATEGY, True, STEPS, probe.EXACT_BETAS, loss_scale=True)
  assert ran and "optimizer/dynamic_scale" in initial
  plain = probe.weights_and_slots(runs[False][0])
  assert (probe.max_scaled_difference(probe.weights_and_slots(scaled), plain)
          <= probe.KERAS_TOLERANCE)


def test_checkpoints_restore_across_fused_and_keras(runs):
  assert (sorted(tf.train.list_variables(runs[True][3]))
          == sorted(tf.train.list_variables(runs[False][3])))  # same slot names and shapes
  reference = runs[False][0]
  # 2 steps, save, restore into the other class, 2 more steps == 4 uninterrupted steps.
  for fused, saved_by_fused in ((False, True), (True, False)):
    resumed, restored, _ = probe.train(STRATEGY, fused, STEPS - 2, probe.EXACT_BETAS,
                                       restore=runs[saved_by_fused][3])
    assert int(restored["optimizer/iteration"]) == 2
    assert probe.max_scaled_difference(resumed, reference) <= probe.KERAS_TOLERANCE


@pytest.mark.slow  # a subprocess: two logical CPUs must be configured before TensorFlow starts
def test_mirrored_strategy_matches_keras_adamw():
  done = subprocess.run([sys.executable, "-m", "tests.training.fused_adamw_probe"], env=env(),
                        cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert done.returncode == 0, done.stderr[-3000:]
  result = json.loads(done.stdout.strip().splitlines()[-1])
  assert result["replicas"] == 2 and result["fused_kernel_ran"], result
  assert result["moved"] > 1e-3, result
  assert result["max_scaled"] <= probe.KERAS_TOLERANCE, result
  # Per-replica gradient scales (0.25, 0.5) under a LossScaleOptimizer: each replica's weights
  # and slots follow its own scale, and the two scales lead to clearly different slots.
  assert result["per_replica_scale_max_scaled"] <= 1e-6, result
  assert result["scales_apart"] > 1e-3, result
  # The optimizer's own global-norm clip under two replicas is Keras': each replica clipped,
  # then summed.
  assert result["clip_moved"] > 1e-3, result
  assert result["clipped_max_scaled"] <= probe.KERAS_TOLERANCE, result


def _fit(fused: bool, clip_global_norm, monkeypatch=None):
  """Weights and slots after model.fit (3 epochs of one batch) with the optimizer's own
  global-norm clip, as fine-tuning runs it; and FusedAdamW's scaled update count. Every token id
  once per batch, so keras AdamW's sparse update is Adam's (probe.dense_for_keras)."""
  model, optimizer = probe.build(fused, probe.EXACT_BETAS, clip_global_norm=clip_global_norm)
  model.compile(optimizer=optimizer, loss="mse")
  x = np.random.default_rng(0).permutation(16).reshape(4, 4).astype("int32")
  y = probe.data()[1][:4]
  with monkeypatch.context() if monkeypatch else contextlib.nullcontext() as patch:
    if patch:  # every variable, the sparse embedding's too, takes the fused kernel
      patch.setattr(keras.optimizers.AdamW, "update_step",
                    lambda *a: pytest.fail("keras AdamW's update_step ran under FusedAdamW"))
    model.fit(x, y, batch_size=len(x), epochs=3, shuffle=False, verbose=0)
  folded = optimizer._scale_state.scaled_updates if fused else 0
  return probe.state(model, optimizer), folded


@pytest.mark.parametrize("limit", [probe.CLIP, 1e6])  # clipping every step; never clipping
def test_global_clipnorm_in_fit_matches_keras_folded_into_the_update(limit, monkeypatch):
  fused, folded = _fit(True, limit, monkeypatch)
  plain, _ = _fit(False, limit)
  unclipped, _ = _fit(False, None)
  assert folded > 0  # the clip factor reached the fused update (no pass scaling the gradients)
  assert probe.max_scaled_difference(fused, plain) <= probe.KERAS_TOLERANCE
  clip_moved = probe.max_scaled_difference(plain, unclipped)
  assert clip_moved > 1e-3 if limit == probe.CLIP else clip_moved < 1e-6


def test_sparse_gradients_are_adam_on_their_dense_sum():
  # A row repeated in the slices (a token seen twice in a batch) is updated with the sum of its
  # slices, as Adam on the dense gradient (the original BERT's optimizer squares the dense sum
  # too); rows not in the slices still decay and move with their moments. keras AdamW given the
  # slices squares each before summing (g1^2 + g2^2): the control that this test tells them apart.
  lr, wd, b1, b2, eps = 0.01, 0.1, probe.EXACT_BETAS[0], probe.EXACT_BETAS[1], 1e-7
  start = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(4, 3)
  slices = [(np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]) * (t + 1), [2, 2] if t == 0 else [0, 2])
            for t in range(3)]

  def run(optimizer, sparse: bool):
    variable = tf.Variable(start)
    for values, indices in slices:
      gradient = tf.IndexedSlices(tf.constant(values, tf.float32), tf.constant(indices),
                                  tf.constant([4, 3]))
      optimizer.apply_gradients([(gradient if sparse else tf.convert_to_tensor(gradient),
                                  variable)])
    return variable.numpy()

  w, m, v = start.astype("float64"), 0.0, 0.0  # AdamW in float64 on the summed gradient
  for t, (values, indices) in enumerate(slices, 1):
    g = np.zeros_like(w)
    np.add.at(g, indices, values)
    w = w - lr * wd * w
    m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
  kw = dict(learning_rate=lr, weight_decay=wd, beta_1=b1, beta_2=b2, epsilon=eps)
  sparse = run(FusedAdamW(**kw), True)
  np.testing.assert_allclose(sparse, w, rtol=1e-6, atol=1e-7)
  np.testing.assert_array_equal(sparse, run(FusedAdamW(**kw), False))
  keras_sparse = run(keras.optimizers.AdamW(**kw), True)
  assert np.max(np.abs(keras_sparse - w)) > 1e-4


def test_keras_gradient_accumulation_matches_keras_adamw():
  # Keras applies accumulated gradients inside a cond, a graph of its own: the step's scalars are
  # made again there, not taken from the outer graph.
  def run(optimizer_class):
    keras.utils.set_random_seed(3)
    variables = [tf.Variable(tf.random.normal([3, 4])), tf.Variable(tf.random.normal([4]))]
    optimizer = optimizer_class(learning_rate=0.05, weight_decay=0.1,
                                gradient_accumulation_steps=2)
    grads = [[tf.random.normal(v.shape) for v in variables] for _ in range(6)]

    @tf.function
    def apply(g):
      optimizer.apply_gradients(zip(g, variables))
    for g in grads:
      apply(g)
    return [v.numpy() for v in variables], int(optimizer.iterations.numpy())

  (fused, steps), (plain, plain_steps) = run(FusedAdamW), run(keras.optimizers.AdamW)
  assert steps == plain_steps == 3  # (Keras counts the applied updates)
  start = run(lambda **kw: keras.optimizers.AdamW(**{**kw, "learning_rate": 0.0}))[0]
  for f, p, s in zip(fused, plain, start):
    assert np.max(np.abs(p - s)) > 1e-2  # three accumulated updates moved the weights
    np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-6)
