"""Keras AdamW whose dense update of each variable (gradient scale, decoupled weight decay, Adam;
Loshchilov & Hutter 2019, Kingma & Ba 2015 algorithm 1) is one XLA-compiled pass over var, m, v and
the gradient. Why and what it measured: docs/design.md, "FusedAdamW" (BERT-Base optimizer phase on
2 CPU cores 128 -> 105 ms; weights within 1.5e-7 of float64 AdamW, Keras' within 1.9e-6).
Slots are Keras AdamW's; sparse gradients are summed first (Adam's (g1 + g2)^2)."""

from __future__ import annotations

import collections
import contextlib
import types
import weakref

import keras
import tensorflow as tf

from bert_keras.training import keras_internals
from bert_keras.training.bias_correction import one_minus_power

# Dtypes the fused kernel is used for.
_FUSED_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64)


# `update_step`'s learning rate while a `gradient_scale` is set (module docstring).
_ScaledLearningRate = collections.namedtuple("_ScaledLearningRate", "learning_rate scale")
# One step's scalars of `_adamw_update` for one dtype; `zero`: the decay of excluded variables.
_StepScalars = collections.namedtuple(
    "_StepScalars", "decay zero scale alpha one_minus_beta_1 one_minus_beta_2 epsilon")


@tf.function(jit_compile=True, autograph=False)
def _adamw_update(var, m, v, grad, decay, scale, alpha, one_minus_beta_1, one_minus_beta_2,
                  epsilon):
  """g = grad * scale; var -= var * decay; m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2);
  var -= m alpha / (sqrt(v) + epsilon), alpha = lr sqrt(1 - beta2^t) / (1 - beta1^t).
  var, m, v are resource handles, updated in place."""
  dtype = grad.dtype
  w = tf.raw_ops.ReadVariableOp(resource=var, dtype=dtype)
  m_old = tf.raw_ops.ReadVariableOp(resource=m, dtype=dtype)
  v_old = tf.raw_ops.ReadVariableOp(resource=v, dtype=dtype)
  g = grad * scale
  w = w - w * decay
  m_new = m_old + (g - m_old) * one_minus_beta_1
  v_new = v_old + (tf.square(g) - v_old) * one_minus_beta_2
  tf.raw_ops.AssignVariableOp(resource=m, value=m_new)
  tf.raw_ops.AssignVariableOp(resource=v, value=v_new)
  tf.raw_ops.AssignVariableOp(resource=var, value=w - m_new * alpha / (tf.sqrt(v_new) + epsilon))
  return tf.zeros([], dtype)  # (an output, so the call is an op other ops can depend on)


@keras.saving.register_keras_serializable(package="bert_keras")
class FusedAdamW(keras_internals.CollectiveUpdateHooks, keras.optimizers.AdamW):
  """A drop-in `keras.optimizers.AdamW` (same constructor, config and slots).
  `with optimizer.gradient_scale(s): apply_gradients(...)` applies `s` * the gradients."""

  def __init__(self, *args, name=None, **kwargs):
    # Keras' default name, so variable paths ("adam_w/..._momentum") match AdamW's.
    super().__init__(*args, name=name or "adam_w", **kwargs)
    # A namespace: attribute tracking would make a dict a checkpoint dependency AdamW lacks.
    # Keyed by replica, not thread: a LossScaleOptimizer re-enters `apply` in a new thread.
    self._scale_state = types.SimpleNamespace(
        scales={},  # {replica: scale} set by `gradient_scale`
        applies=0, scaled_updates=0,  # trace-time counts: did a set scale reach update_step?
        clip_factors={},  # {replica: global-norm clip factor} from `clip_gradients`
        step_scalars=weakref.WeakKeyDictionary())  # {graph: {key: scalars}}, `_step_scalars`

  @contextlib.contextmanager
  def gradient_scale(self, scale):
    """apply_gradients applies `scale` * the gradients (set inside the replica function).
    RuntimeError when no update received the scale: better than training silently unclipped."""
    key = _replica_key()
    previous = self._scale_state.scales.get(key)
    self._scale_state.scales[key] = scale
    applies, scaled_updates = self._scale_state.applies, self._scale_state.scaled_updates
    try:
      yield
    finally:
      if previous is None:
        self._scale_state.scales.pop(key, None)
      else:
        self._scale_state.scales[key] = previous
    # Keras' own gradient accumulation skips the update on most eager calls: not checked.
    if (self._scale_state.applies != applies and self._scale_state.scaled_updates == scaled_updates
        and not self.gradient_accumulation_steps):
      raise RuntimeError(
          "FusedAdamW.gradient_scale: gradients were applied but no update_step received the "
          f"scale; keras {keras.__version__} no longer passes _backend_update_step's "
          "learning_rate to update_step (see bert_keras/training/keras_internals.py)")

  def apply(self, grads, trainable_variables=None):
    if len(grads):
      self._scale_state.applies += 1
    return super().apply(grads, trainable_variables)

  # The decay runs in before_collective_update or update_step, which know each variable's gradient.
  decays_before_update = keras.backend.backend() != "tensorflow"

  def before_collective_update(self, grads, trainable_variables, learning_rate):
    """Keras' decay for the variables the parent updates (the fused kernel decays the rest), then
    this replica's scale and clip factor ride with the learning rate to `update_step`."""
    if keras.backend.backend() == "tensorflow":
      parent_path = [v for v in trainable_variables if not self._uses_fused_update(v)]
      if parent_path:  # (Keras' decay costs a merge call even for no variables)
        self.keras_weight_decay(parent_path)
    key = _replica_key()
    scale = self._scale_state.scales.get(key)
    clip_factor = self._scale_state.clip_factors.pop(key, None)
    if clip_factor is not None:
      scale = clip_factor if scale is None else scale * clip_factor
    if scale is not None:
      learning_rate = _ScaledLearningRate(learning_rate, scale)
    return learning_rate

  def clip_gradients(self, grads):
    """Keras' clipping, except that a lone replica's global-norm clip factor goes to the fused
    kernel instead of a pass multiplying every gradient (sparse gradients summed first)."""
    if self._fused_path_applies():
      grads = [None if g is None else _dense(g) for g in grads]
    if not self._folds_global_clipnorm(grads):
      return super().clip_gradients(grads)
    norm = tf.linalg.global_norm([g for g in grads if g is not None])
    self._scale_state.clip_factors[_replica_key()] = clip_factor(
        norm, tf.cast(self.global_clipnorm, norm.dtype))
    return grads

  def _folds_global_clipnorm(self, grads) -> bool:
    """Keras' global-norm clip (`clipnorm` takes precedence), one replica (Keras clips each
    replica before the sum), no accumulation (a Keras cond), float gradients."""
    context = tf.distribute.get_replica_context()
    return (self._fused_path_applies()
            and bool(self.global_clipnorm) and self.global_clipnorm > 0 and not self.clipnorm
            and not self.gradient_accumulation_steps
            and context is not None and context.num_replicas_in_sync == 1
            and all(g is None or tf.as_dtype(g.dtype) in _FUSED_DTYPES for g in grads))

  def update_step(self, gradient, variable, learning_rate):
    scale = None
    if isinstance(learning_rate, _ScaledLearningRate):
      learning_rate, scale = learning_rate
      self._scale_state.scaled_updates += 1
    if not self._uses_fused_update(variable):
      # Already decayed by Keras (before_collective_update above, or Keras' own pass elsewhere).
      if scale is not None:
        gradient = _scaled(gradient, scale)
      return super().update_step(gradient, variable, learning_rate)
    gradient = _dense(gradient)
    var_handle, m_handle, v_handle = self._resource_handles(variable)
    step = self._step_scalars(learning_rate, scale, variable.dtype, variable.device)
    decays = (self.weight_decay is not None
              and keras_internals.uses_weight_decay(self, variable))
    _adamw_update(var_handle, m_handle, v_handle, tf.cast(gradient, variable.dtype),
                  step.decay if decays else step.zero, step.scale, step.alpha,
                  step.one_minus_beta_1, step.one_minus_beta_2, step.epsilon)

  def _step_scalars(self, learning_rate, scale, dtype, device) -> _StepScalars:
    """The update's scalars, once per step graph, device, dtype, learning rate and scale (Keras
    makes ~20 ops per variable: MiniLM's optimizer graph 2,261 -> 634 ops)."""
    key = (device, tf.as_dtype(dtype), id(learning_rate), id(scale))
    memo = None
    if not tf.executing_eagerly():
      memo = self._scale_state.step_scalars.setdefault(tf.compat.v1.get_default_graph(), {})
      if key in memo:
        return memo[key][0]
    cast = lambda x: tf.cast(x, dtype)
    lr = cast(learning_rate)
    local_step = cast(self.iterations + 1)
    # Bias corrections accurate to float32 rounding; (1 - beta) in Python floats, as Keras does.
    alpha = (lr * tf.sqrt(one_minus_power(self.beta_2, local_step, dtype))
             / one_minus_power(self.beta_1, local_step, dtype))
    scalars = _StepScalars(
        decay=lr * cast(self.weight_decay if self.weight_decay is not None else 0.0),
        zero=cast(0.0), scale=cast(1.0 if scale is None else scale), alpha=alpha,
        one_minus_beta_1=cast(1 - self.beta_1), one_minus_beta_2=cast(1 - self.beta_2),
        epsilon=cast(self.epsilon))
    if memo is not None:  # (holding the key's objects keeps their ids this graph's)
      memo[key] = (scalars, learning_rate, scale)
    return scalars

  def _uses_fused_update(self, variable) -> bool:
    """From the variable alone, so `before_collective_update` and `update_step` agree."""
    return self._fused_path_applies() and tf.as_dtype(variable.dtype) in _FUSED_DTYPES

  def _fused_path_applies(self) -> bool:
    """TensorFlow backend, no amsgrad (an extra slot), no TPU (not plain resource variables)."""
    return (keras.backend.backend() == "tensorflow" and not self.amsgrad
            and not _is_tpu_strategy(keras_internals.distribution_strategy(self))
            and not _is_tpu_strategy(tf.distribute.get_strategy()))

  def _resource_handles(self, variable):
    """(var, m, v) handles; inside `extended.update` a distributed variable's is the replica's."""
    handles = []
    for t in (variable, *keras_internals.adam_slots(self, variable)):
      t = t.value if isinstance(t, keras.Variable) else t
      handle = t.handle
      if handle.dtype != tf.resource:
        raise TypeError(f"FusedAdamW needs resource variables, got {t!r}")
      handles.append(handle)
    return handles


def clip_factor(norm, limit):
  """`tf.clip_by_global_norm`'s factor: min(1, limit / norm), NaN for a non-finite norm."""
  return limit * tf.minimum(1.0 / norm, 1.0 / limit) + (norm - norm)


def _replica_key():
  """The replica's index in its sync group, the same in every thread (None when unknown)."""
  context = tf.distribute.get_replica_context()
  if context is None:
    return None
  replica = tf.get_static_value(context.replica_id_in_sync_group)
  return None if replica is None else int(replica)


def _dense(gradient):
  """IndexedSlices summed into a dense tensor (repeated rows add up)."""
  if isinstance(gradient, tf.IndexedSlices):
    rows = tf.get_static_value(gradient.dense_shape)
    rows = gradient.dense_shape[0] if rows is None else int(rows[0])
    return tf.math.unsorted_segment_sum(gradient.values, gradient.indices, rows)
  return gradient


def _scaled(gradient, scale):
  """gradient * scale, dense or IndexedSlices."""
  if isinstance(gradient, tf.IndexedSlices):
    return tf.IndexedSlices(gradient.values * tf.cast(scale, gradient.dtype), gradient.indices,
                            gradient.dense_shape)
  return gradient * tf.cast(scale, gradient.dtype)


def _is_tpu_strategy(strategy) -> bool:
  """TPUStrategy (v1 or v2)."""
  return "TPU" in type(strategy).__name__
