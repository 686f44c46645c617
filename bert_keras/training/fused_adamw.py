"""Keras AdamW whose update is one fused pass per variable: scale, weight decay and Adam.

Why: Keras 3's `Adam.update_step` is a dozen separate element-wise ops per variable (sub, mul,
square, assign_add, sqrt, add, div, ...), each a full pass over a BERT-Base-sized tensor; on CPU the
optimizer alone took ~2.7 s of a BERT-Base step. Keras' `_apply_weight_decay` adds three more
passes per weight (var * wd, * lr, assign_sub) and the Trainer's clipping one more over every
gradient. Here the gradient's scale (the clip factor, `gradient_scale`), the decay and the Adam
update are one XLA-compiled element-wise kernel per variable (`_adamw_update`) that reads var, m, v
and the gradient once and writes var, m and v once. (Earlier versions ran the decay and scale as
one such kernel and the Adam update as TensorFlow's `ResourceApplyAdam`, the kernel the original
BERT release and tf.keras 2's Adam used: one more pass over var, m, v and the gradient. BERT-Base
optimizer phase, 110M parameters on 2 CPU cores, interleaved microbenchmark: 128 -> 105 ms; the
variables' kernels run side by side in the inter-op pool.)

The update is Keras AdamW's, in its order (per variable):
  g <- g * scale                      (`gradient_scale`, e.g. the global-norm clip factor; else 1)
  var <- var - lr wd var              (decoupled weight decay, Loshchilov & Hutter 2019, skipped
                                       for variables `exclude_from_weight_decay` names)
  m <- m + (g - m)(1 - beta1);  v <- v + (g^2 - v)(1 - beta2)
  var <- var - m alpha / (sqrt(v) + epsilon),   alpha = lr sqrt(1 - beta2^t) / (1 - beta1^t)
(Kingma & Ba 2015, algorithm 1 with the "epsilon hat" form, section 2). Where this differs from
Keras, it is closer to that algorithm: (1 - beta) is formed in Python floats and then rounded to
float32, as Keras does (TensorFlow's Adam kernel used 1 - float32(beta), 1.3e-5 relative away for
beta2 = 0.999), while the bias corrections 1 - beta^t are accurate to float32 rounding
(`bias_correction.one_minus_power`; Keras' 1 - float32(beta)^t is 1.3e-5 off at t = 1 for
beta2 = 0.999 and rounds beta^t before a cancellation at every small t). And XLA contracts
`a + b * c` into fused multiply-adds, which round once where Keras rounds twice. Against AdamW
in float64, three steps with the paper's betas: weights and velocity within 1.5e-7 relative here,
Keras' within 1.9e-6; against Keras itself, a few 1e-6 of each array's scale. The fused path
decays each variable right before its Adam update (Keras decays all variables, then updates them
all; each variable's result is the same). The step's scalars (learning rate, decay, alpha, the
betas' complements) are made once per step graph and dtype for all variables (`_step_scalars`),
where Keras makes them again for each: MiniLM's optimizer graph 2,261 -> 634 ops, its trace
1.8-2.5 -> 1.0-1.1 s on 2 CPU cores.

Sparse (IndexedSlices) gradients, such as an embedding table's, are summed into a dense gradient
and take the fused update too: Adam on the dense gradient, as the original BERT and the Trainer
compute it. Keras' own path for them is a dozen passes over the whole table, and its `ops.square`
squares each slice before repeated rows are summed: a token seen twice in a batch gets the velocity
g1^2 + g2^2 there instead of Adam's (g1 + g2)^2.

Global-norm clipping (`global_clipnorm`, which `model.fit` fine-tuning uses) is Keras' except where
it costs: Keras multiplies every gradient by the clip factor, a pass over all of them. When one
replica applies its own gradients (no tf.distribute replicas beside it, no accumulation, no
`clipnorm`), `clip_gradients` (the hook training/keras_internals.py routes Keras' `_clip_gradients`
to) computes the same factor, by Keras' formula (NaN for a non-finite norm), and hands it to the
fused kernel as the gradient scale below. With several replicas Keras clips each replica's gradient
before they are summed, which a scale applied after the sum cannot reproduce: there Keras clips, as
it does. (The Trainer clips the summed gradient itself, through `gradient_scale`.)

Everything else is inherited from `keras.optimizers.AdamW`, unchanged: slot variables (`momentum`,
`velocity`) with the same names, so checkpoints of either class restore into the other;
`LossScaleOptimizer` wrapping; every `tf.distribute` strategy (the update runs inside
`strategy.extended.update`, where a mirrored variable's `.handle` is the local replica's). The
parent's `update_step`, after Keras' own `_apply_weight_decay`, updates `amsgrad`, TPU strategies
and other dtypes; other backends run the parent as is.

How the gradient scale reaches the update, and the Keras contract it depends on. The scale is a
per-replica tensor (under MirroredStrategy each replica computes its own) that must reach
`update_step`, which runs inside the merge call, in another thread, once per device. Keras hands
`update_step` exactly two per-replica values across the merge call: the gradient and the learning
rate. Keras 3's TensorFlow optimizer (keras/src/backend/tensorflow/optimizer.py) calls
`_backend_update_step(grads, trainable_variables, learning_rate)` once per `apply`, in replica
context, after `_apply_weight_decay`; it passes `learning_rate` unchanged through
`maybe_merge_call` and `extended.update(var, fn, args=(grad, learning_rate))` to
`update_step(grad, var, learning_rate)`. FusedAdamW's `before_collective_update` (called from
`_backend_update_step` by training/keras_internals.py, which holds every private API the training
code uses) replaces the learning
rate by `_ScaledLearningRate(learning_rate, scale)`, a namedtuple: the merge call regroups it member
by member into per-replica values and `extended.update` hands each device its own replica's
members, so each replica's update uses its own scale. Alternatives weighed and rejected: scaling
the gradients before `apply_gradients` is the extra pass this avoids; a per-replica (sync-on-read)
optimizer variable holding the scale adds state that checkpoints must skip, an assignment per step
and a dependence on how tf.distribute reads such variables inside `extended.update`; carrying it
on the gradient breaks Keras' and LossScaleOptimizer's gradient handling; overriding only public
methods (`apply`, `update_step`) cannot cross the merge call. If a Keras release stops routing the
learning rate this way, `gradient_scale` raises (a scale set but never applied) instead of
silently not clipping; tests/training/test_fused_adamw.py simulates that change.
"""

from __future__ import annotations

import contextlib
import types
import weakref
from typing import Any, NamedTuple

import keras
import tensorflow as tf

from bert_keras.training import keras_internals
from bert_keras.training.bias_correction import one_minus_power

# Dtypes the fused kernel is used for.
_FUSED_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64)


class _ScaledLearningRate(NamedTuple):
  """What `update_step` receives as its learning rate while a `gradient_scale` is set.

  A namedtuple because tf.distribute's merge call regroups it member by member and
  `extended.update` passes each device its own replica's members (module docstring).
  """
  learning_rate: Any  # what Keras passed: float32 scalar tensor or variable
  scale: Any  # scalar tensor: the gradient is applied multiplied by it


class _StepScalars(NamedTuple):
  """One step's scalars of `_adamw_update` for one dtype (`FusedAdamW._step_scalars`)."""
  decay: Any  # lr * weight_decay, for the variables that decay
  zero: Any  # the decay of those that do not
  scale: Any
  alpha: Any
  one_minus_beta_1: Any
  one_minus_beta_2: Any
  epsilon: Any


@tf.function(jit_compile=True, autograph=False)
def _adamw_update(var, m, v, grad, decay, scale, alpha, one_minus_beta_1, one_minus_beta_2,
                  epsilon):
  """The whole AdamW update of one variable in one fused pass over var, m, v and grad (resource
  handles for the first three, updated in place; module docstring for the formulas):
  g = grad * scale; var -= var * decay; m += (g - m)(1 - beta1); v += (g^2 - v)(1 - beta2);
  var -= m alpha / (sqrt(v) + epsilon), alpha = lr sqrt(1 - beta2^t) / (1 - beta1^t).

  XLA contracts `a + b * c` into fused multiply-adds, which round once instead of twice.
  """
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
  """`keras.optimizers.AdamW` with each dense update done by one fused kernel (module docstring).

  Same constructor, config, slots and results (to float32 rounding, and closer to Adam's algorithm
  than Keras' own: module docstring); a drop-in replacement.
  `with optimizer.gradient_scale(s): apply_gradients(...)` applies the gradients multiplied by the
  scalar `s` without a separate pass over them.
  """

  def __init__(self, *args, name=None, **kwargs):
    # Keras' default name, so variable paths ("adam_w/..._momentum") match AdamW's.
    super().__init__(*args, name=name or "adam_w", **kwargs)
    # A namespace, not attributes: the optimizer's attribute tracking would turn a dict into a
    # checkpoint dependency that keras AdamW's checkpoints lack.
    self._scale_state = types.SimpleNamespace(
        # {replica index: scale} set by `gradient_scale`. Keyed by replica, not by thread: a
        # LossScaleOptimizer under MirroredStrategy re-enters each replica's `apply` in a new
        # thread (call_for_each_replica inside its merge call).
        scales={},
        # Trace-time counts for `gradient_scale`'s check that a set scale reached the update.
        applies=0,  # `apply` calls with gradients
        scaled_updates=0,  # `update_step` calls that received a _ScaledLearningRate
        # {replica index: global-norm clip factor} from `clip_gradients`, taken by the
        # `before_collective_update` that follows it in the same `apply`.
        clip_factors={},
        # {step graph: {key: (_StepScalars, its learning rate, its scale)}} for `_step_scalars`;
        # an entry lives as long as its graph.
        step_scalars=weakref.WeakKeyDictionary())

  @contextlib.contextmanager
  def gradient_scale(self, scale):
    """Within this context, apply_gradients applies `scale` (a scalar tensor) * the gradients.

    Per replica: set it inside the replica function. Raises RuntimeError when gradients were
    applied but no update received the scale (Keras no longer routes the learning rate as the
    module docstring describes): better than training silently unclipped.
    """
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
    """Before Keras' collective update (the contract is in the module docstring), two steps
    that need the gradients, which Keras' own decay pass is not given:

    1. Keras' own `_apply_weight_decay` for the variables whose update takes the parent's path
       (amsgrad, TPU, other dtypes), before every update as in Keras; the fused path decays
       each variable inside its update instead (`_adamw_update`).
    2. This replica's `gradient_scale` and the clip factor `clip_gradients` left for it, if any,
       ride (multiplied) with the learning rate to `update_step`.
    """
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
    """Keras' clipping of the gradients the fused update applies (sparse ones summed into dense
    ones first, so norms are those of the gradient Adam sees); the global-norm clip of a lone
    replica's update is folded into the fused kernel instead (module docstring): the same
    factor, no pass multiplying the gradients."""
    if self._fused_path_applies():
      grads = [None if g is None else _dense(g) for g in grads]
    if not self._folds_global_clipnorm(grads):
      return super().clip_gradients(grads)
    norm = tf.linalg.global_norm([g for g in grads if g is not None])
    self._scale_state.clip_factors[_replica_key()] = clip_factor(
        norm, tf.cast(self.global_clipnorm, norm.dtype))
    return grads

  def _folds_global_clipnorm(self, grads) -> bool:
    """Whether `clip_gradients` hands the global-norm clip to the fused kernel: only the
    global-norm clip Keras would apply (`clipnorm` takes precedence in Keras), one replica, no
    gradient accumulation (its update runs inside a cond of Keras'), float gradients the fused
    kernel updates."""
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
    """This step's scalars of the update, made once per step graph, device, dtype, learning rate
    and scale and shared by the variables' updates. (Keras makes them again for every variable:
    about 20 ops each, which every step runs and the first step traces; 1,600 of them for
    MiniLM's 81 variables.) Eagerly, made afresh on every call."""
    key = (device, tf.as_dtype(dtype), id(learning_rate), id(scale))
    memo = None
    if not tf.executing_eagerly():
      memo = self._scale_state.step_scalars.setdefault(tf.compat.v1.get_default_graph(), {})
      if key in memo:
        return memo[key][0]
    cast = lambda x: tf.cast(x, dtype)
    lr = cast(learning_rate)
    local_step = cast(self.iterations + 1)
    # Both bias corrections accurate to float32 rounding (module docstring), and (1 - beta) in
    # Python floats, then cast, as Keras does: for beta2 = 0.999 that is not 1 - float32(0.999).
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
    """Whether this variable's update is the fused one (else the parent's, after Keras' decay),
    for dense and sparse gradients alike (a sparse one is summed into a dense one).

    Decided from the variable alone, so `before_collective_update` (keras variables, replica
    context) and `update_step` (a replica's component variable) agree.
    """
    return self._fused_path_applies() and tf.as_dtype(variable.dtype) in _FUSED_DTYPES

  def _fused_path_applies(self) -> bool:
    """Whether the fused kernel may update this optimizer's variables at all: the TensorFlow
    backend, no amsgrad (Keras' path keeps the extra slot), and no TPU strategy, neither the
    optimizer's nor the current one (TPU variables are not plain resource variables)."""
    return (keras.backend.backend() == "tensorflow" and not self.amsgrad
            and not _is_tpu_strategy(keras_internals.distribution_strategy(self))
            and not _is_tpu_strategy(tf.distribute.get_strategy()))

  def _resource_handles(self, variable):
    """(var, m, v) resource handles for the kernel; inside `extended.update` a distributed
    variable's handle is the updated replica's."""
    handles = []
    for t in (variable, *keras_internals.adam_slots(self, variable)):
      t = t.value if isinstance(t, keras.Variable) else t
      handle = t.handle
      if handle.dtype != tf.resource:
        raise TypeError(f"FusedAdamW needs resource variables, got {t!r}")
      handles.append(handle)
    return handles


def clip_factor(norm, limit):
  """What `tf.clip_by_global_norm` multiplies every gradient by: 1 at or below `limit`, limit /
  norm above it, NaN when the norm is not finite (so a bad step is visible, as in Keras)."""
  return limit * tf.minimum(1.0 / norm, 1.0 / limit) + (norm - norm)


def _replica_key():
  """The current replica's index in its sync group (None in cross-replica context or when not
  static); the same in every thread Keras or tf.distribute runs that replica's work in."""
  context = tf.distribute.get_replica_context()
  if context is None:
    return None
  replica = tf.get_static_value(context.replica_id_in_sync_group)
  return None if replica is None else int(replica)


def _dense(gradient):
  """A gradient as a dense tensor: IndexedSlices summed row by row (repeated indices add up), as
  `tf.convert_to_tensor` does."""
  if isinstance(gradient, tf.IndexedSlices):
    rows = tf.get_static_value(gradient.dense_shape)
    rows = gradient.dense_shape[0] if rows is None else int(rows[0])
    return tf.math.unsorted_segment_sum(gradient.values, gradient.indices, rows)
  return gradient


def _scaled(gradient, scale):
  """gradient * scale for a dense or IndexedSlices gradient (only the values are scaled)."""
  if isinstance(gradient, tf.IndexedSlices):
    return tf.IndexedSlices(gradient.values * tf.cast(scale, gradient.dtype), gradient.indices,
                            gradient.dense_shape)
  return gradient * tf.cast(scale, gradient.dtype)


def _is_tpu_strategy(strategy) -> bool:
  """True under TPUStrategy (v1 or v2), whose variables the raw kernel must not touch."""
  return "TPU" in type(strategy).__name__
