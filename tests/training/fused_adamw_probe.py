"""Runs FusedAdamW and keras AdamW on one small model; also a subprocess probe for MirroredStrategy.

`train(...)` is imported by test_fused_adamw.py (default strategy). Run as
`python -m tests.training.fused_adamw_probe` it configures two logical CPUs (which must happen before
TensorFlow initialises, hence a separate process) and prints one JSON line comparing the two
optimizers under a two-replica MirroredStrategy, without and with a per-replica
`gradient_scale`.
"""

from __future__ import annotations

import json

import numpy as np
import tensorflow as tf

BATCH = 8
# keras AdamW forms (1 - beta) in float64 then rounds it, the fused kernel forms it in float32 (see
# fused_adamw.py). For betas whose complement is exact in float32 both use the same coefficients:
EXACT_BETAS = (0.875, 0.998046875)  # 1 - 2**-3, 1 - 2**-9
# The paper's betas: keras AdamW given them rounded to float32 computes what the fused kernel does
# for (0.9, 0.999) on dense gradients (on sparse ones FusedAdamW runs the parent, as given).
PAPER_BETAS = (0.9, 0.999)
FLOAT32_BETAS = tuple(float(np.float32(b)) for b in PAPER_BETAS)


def build(fused: bool, betas, loss_scale: bool = False, weight_decay: float = 0.1,
          warmup: int = 2, clip_global_norm: float | None = None):
  """A model with an embedding (a sparse gradient), a dense kernel and bias, a LayerNorm
  (excluded from weight decay), and an optimizer made by create_optimizer."""
  import keras  # pylint: disable=g-import-not-at-top
  from bert_keras.configs.training import OptimizerConfig  # pylint: disable=g-import-not-at-top
  from bert_keras.training.optimization import create_optimizer  # pylint: disable=g-import-not-at-top
  keras.utils.set_random_seed(0)
  ids = keras.Input((4,), dtype="int32")
  x = keras.layers.Embedding(16, 8, name="token_embedding")(ids)
  x = keras.layers.Flatten()(x)
  x = keras.layers.Dense(16, activation="tanh", name="dense")(x)
  x = keras.layers.LayerNormalization(name="layer_norm")(x)
  model = keras.Model(ids, keras.layers.Dense(3, name="head")(x))
  optimizer = create_optimizer(OptimizerConfig(
      learning_rate=1e-2, num_train_steps=20, num_warmup_steps=warmup,
      weight_decay_rate=weight_decay, beta_1=betas[0], beta_2=betas[1],
      clip_global_norm=clip_global_norm or 0.0), fused=fused)
  if loss_scale:
    optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
  return model, optimizer


# A global-norm limit below the probe's gradient norms (~5-15), so the clip changes every step.
CLIP = 0.5


def data():
  rng = np.random.default_rng(0)
  x = rng.integers(0, 16, (BATCH, 4)).astype("int32")
  y = rng.normal(size=(BATCH, 3)).astype("float32")
  return x, y


def scaled(gradient, scale):
  """gradient * scale, dense or IndexedSlices: the pass FusedAdamW.gradient_scale saves."""
  if isinstance(gradient, tf.IndexedSlices):
    return tf.IndexedSlices(gradient.values * scale, gradient.indices, gradient.dense_shape)
  return gradient * scale


def dense_for_keras(grads):
  """The gradients with IndexedSlices summed into dense tensors: the Adam update FusedAdamW
  computes. keras AdamW given IndexedSlices squares each repeated row's slice before summing
  them (`ops.square` on the slices), so for a token seen twice in a batch its velocity gets
  g1^2 + g2^2 instead of Adam's (g1 + g2)^2 (test_fused_adamw.py shows the difference)."""
  return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]


def make_step(strategy, model, optimizer, scales=None):
  """A tf.function running one replica step per call on this strategy's share of the batch.

  scales: optional gradient scale per replica (python floats). FusedAdamW (also when wrapped)
  gets it through `gradient_scale`, applied after Keras' all-reduce; keras AdamW gets gradients
  multiplied by it before the all-reduce: the same values for one power of two on every replica.
  keras AdamW gets the embedding's gradient dense (`dense_for_keras`).
  """
  x, y = data()
  dataset = tf.data.Dataset.from_tensors((x, y)).repeat().unbatch().batch(BATCH)
  iterator = iter(strategy.experimental_distribute_dataset(dataset))
  inner = getattr(optimizer, "inner_optimizer", optimizer)

  def replica_step(batch):
    features, labels = batch
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum((model(features, training=True) - labels) ** 2) / BATCH
      scaled_loss = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled_loss, model.trainable_variables)
    if not hasattr(inner, "gradient_scale"):
      grads = dense_for_keras(grads)
    if scales is None:
      optimizer.apply_gradients(zip(grads, model.trainable_variables))
      return loss
    replica = tf.distribute.get_replica_context().replica_id_in_sync_group
    scale = tf.gather(tf.constant(scales, tf.float32), replica)
    if hasattr(inner, "gradient_scale"):
      with inner.gradient_scale(scale):
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    else:
      optimizer.apply_gradients(zip([scaled(g, scale) for g in grads], model.trainable_variables))
    return loss

  @tf.function
  def step():
    return strategy.run(replica_step, args=(next(iterator),))

  return step


def uses_fused_kernel(step) -> bool:
  """Whether the traced step (or a function it calls) calls FusedAdamW's XLA update kernel
  (fused_adamw._adamw_update)."""
  functions = step.get_concrete_function().graph.as_graph_def().library.function
  return any("_adamw_update" in f.signature.name for f in functions)


def state(model, optimizer, replica: int = 0) -> dict:
  """Every weight and optimizer variable (momentum/velocity slots, iterations) by path, as held
  by `replica` (replicas given different gradient scales hold different values)."""
  local = lambda v: np.asarray(tf.distribute.get_strategy().experimental_local_results(
      v.value)[replica].numpy())
  out = {v.path: local(v) for v in model.weights}
  # Keyed without the optimizer's name scope, which Keras numbers per process (adam_w_1/...).
  out.update({"optimizer/" + v.path.split("/", 1)[-1]: local(v) for v in optimizer.variables})
  return out


def weights_and_slots(state: dict) -> dict:
  """The model weights and Adam slots of a state (not a LossScaleOptimizer's own variables)."""
  return {k: v for k, v in state.items() if k.endswith(("momentum", "velocity")) or
          not k.startswith("optimizer/")}


def train(strategy, fused: bool, steps: int, betas, loss_scale: bool = False,
          save_at: int | None = None, save_prefix: str | None = None, restore: str | None = None,
          scales=None, replica: int | None = 0, clip_global_norm: float | None = None):
  """(state after `steps` steps, initial state, whether the fused kernel ran).

  With `save_at`, a Trainer-style checkpoint (model variables by path + optimizer) is written to
  `save_prefix` (+ "-1") after that many steps; `restore` starts from such a checkpoint instead.
  `scales`: per-replica gradient scales (make_step). The final state is `replica`'s; with
  replica=None, a list of every replica's. `clip_global_norm`: the optimizer's (Keras'
  `global_clipnorm`, each replica's gradient clipped before the sum).
  """
  from bert_keras.training.trainer import model_variables  # pylint: disable=g-import-not-at-top
  with strategy.scope():
    model, optimizer = build(fused, betas, loss_scale, clip_global_norm=clip_global_norm)
    optimizer.build(model.trainable_variables)
  checkpoint = tf.train.Checkpoint(model=model_variables(model), optimizer=optimizer)
  if restore:
    checkpoint.restore(restore).assert_existing_objects_matched()
  initial = state(model, optimizer)
  step = make_step(strategy, model, optimizer, scales)
  for i in range(steps):
    if i == save_at:
      checkpoint.save(save_prefix)
    step()
  with strategy.scope():
    final = ([state(model, optimizer, r) for r in range(strategy.num_replicas_in_sync)]
             if replica is None else state(model, optimizer, replica))
  return final, initial, uses_fused_kernel(step)


def relative_differences(a: dict, b: dict) -> dict:
  """{path: max |a - b| / |b|} over the elements of each array (0/0 counts as 0)."""
  assert sorted(a) == sorted(b), (sorted(a), sorted(b))
  return {k: float(np.max(np.abs(a[k] - b[k]) / np.maximum(np.abs(b[k]), 1e-30))) for k in a}


def max_relative_difference(a: dict, b: dict) -> float:
  return max(relative_differences(a, b).values())


# max_scaled_difference allowed between FusedAdamW and Keras AdamW after a few steps. Keras' bias
# correction 1 - float32(beta)^t rounds beta^t and then cancels (1 ulp of beta2^3 is ~1e-5 of
# 1 - beta2^3 for beta2 = 1 - 2^-9); FusedAdamW's is accurate to rounding (bias_correction.py):
# measured ~1.4e-6 here. A real mistake moves whole arrays by ~lr wd = 1e-3 of their scale.
KERAS_TOLERANCE = 5e-6


def max_scaled_difference(a: dict, b: dict) -> float:
  """max over arrays of max |a - b| / max |b|: the difference relative to each array's scale.

  Element-wise relative differences are not used for the FusedAdamW-vs-Keras comparisons: the
  decay kernel rounds var - lr wd var once (XLA's fused multiply-add) where Keras rounds three
  times, a last-bit difference in a few weights that later steps carry into the moments, where
  an element that cancels to near zero shows it as a large element-wise ratio. A real mistake
  (decay skipped, applied twice or to excluded variables, an unscaled gradient) moves whole
  arrays by ~lr wd = 1e-3 of their scale and more.
  """
  assert sorted(a) == sorted(b), (sorted(a), sorted(b))
  return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k])) /
                   max(float(np.max(np.abs(b[k]))), 1e-30)) for k in a)


def max_change(a: dict, b: dict) -> float:
  return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in a)


def main():
  cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
  # One MirroredStrategy for the whole process: two over the same devices would reuse collective
  # instance keys and abort each other's all-reduces.
  strategy = tf.distribute.MirroredStrategy(cpus[:2])
  # Unclipped and clipped, 3 steps each (warm-up and after); keras AdamW unclipped is also the
  # control that the clip changed the updates.
  fused, initial, ran = train(strategy, True, 3, EXACT_BETAS)
  plain = train(strategy, False, 3, EXACT_BETAS)[0]
  # Each replica applies its own scale (what the Trainer's clip factor relies on), also when a
  # LossScaleOptimizer re-enters the replicas from its merge call: replica r of the fused run
  # equals keras AdamW given gradients * scales[r] on both replicas. One step: after it the
  # replicas' weights differ, so a next step's all-reduced gradient would mix the two models.
  # The Adam slots after it differ by the scale (m by 2x, v by 4x).
  scales = (0.25, 0.5)
  per_replica, _, scaled_ran = train(strategy, True, 1, EXACT_BETAS, loss_scale=True,
                                     scales=scales, replica=None)
  references = [train(strategy, False, 1, EXACT_BETAS, scales=(s, s))[0] for s in scales]
  # The optimizer's own global-norm clip clips each replica's gradient before the sum (Keras):
  # FusedAdamW must not fold one replica's factor into the summed update there.
  clipped_fused = train(strategy, True, 3, EXACT_BETAS, clip_global_norm=CLIP)[0]
  clipped_plain = train(strategy, False, 3, EXACT_BETAS, clip_global_norm=CLIP)[0]
  print(json.dumps({
      "replicas": strategy.num_replicas_in_sync, "fused_kernel_ran": ran and scaled_ran,
      "max_scaled": max_scaled_difference(fused, plain),
      "moved": max_change(fused, initial),
      "per_replica_scale_max_scaled": max(
          max_scaled_difference(weights_and_slots(got), weights_and_slots(want))
          for got, want in zip(per_replica, references)),
      "scales_apart": max_scaled_difference(references[0], references[1]),
      "clipped_max_scaled": max_scaled_difference(clipped_fused, clipped_plain),
      "clip_moved": max_scaled_difference(clipped_plain, plain)}))


if __name__ == "__main__":
  tf.config.set_logical_device_configuration(
      tf.config.list_physical_devices("CPU")[0],
      [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
  main()
