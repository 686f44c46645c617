"""Keras AdamW whose dense update is two fused passes: weight decay + gradient scale, then Adam.

Why: Keras 3's `Adam.update_step` is a dozen separate element-wise ops per variable (sub, mul,
square, assign_add, sqrt, add, div, ...), each a full pass over a BERT-Base-sized tensor; on CPU the
optimizer alone took ~2.7 s of a BERT-Base step. `tf.raw_ops.ResourceApplyAdam` does the Adam update
in one fused, multi-threaded pass (~1.5 s in the same probe); it is the kernel the original BERT
release and tf.keras 2's Adam used. Keras' `_apply_weight_decay` adds three more passes per weight
(var * wd, * lr, assign_sub) and the Trainer's clipping one more over every gradient; here the decay
and the gradient's scale (the clip factor, `gradient_scale`) are one XLA-compiled element-wise pass
(`_decay_and_scale`) that feeds the Adam kernel. (Fusing Adam into it too would save another pass,
but XLA contracts the moment updates into fused multiply-adds, whose rounding is not Keras'.)

The update is Keras AdamW's, in its order (per variable):
  g <- g * scale                      (`gradient_scale`, e.g. the global-norm clip factor; else 1)
  var <- var - lr wd var              (decoupled weight decay, Loshchilov & Hutter 2019, skipped
                                       for variables `exclude_from_weight_decay` names)
  m <- m + (g - m)(1 - beta1);  v <- v + (g^2 - v)(1 - beta2)
  var <- var - lr_t m / (sqrt(v) + epsilon),   lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)
(Kingma & Ba 2015, algorithm 1 with the "epsilon hat" form, section 2). The one numerical
difference: the Adam kernel forms (1 - beta) in float32 from float32(beta), while Keras rounds the float64 (1 - beta) to float32: for beta2 = 0.999 the two
coefficients differ by 1.3e-5 relative (float32 spacing near 0.999), so `v` differs at that level
and the weights far below it; for betas with an exact float32 complement (e.g. 0.875, 0.998046875)
the results agree to float32 rounding. The decay is applied per variable right before that
variable's Adam update (Keras applies it to all variables, then updates them all; each variable's
result is the same).

Everything else is inherited from `keras.optimizers.AdamW`, unchanged: slot variables (`momentum`,
`velocity`) with the same names, so checkpoints of either class restore into the other;
`LossScaleOptimizer` wrapping; every `tf.distribute` strategy (the update runs inside
`strategy.extended.update`, where a mirrored variable's `.handle` is the local replica's; the scale
travels through the merge call with the learning rate, so each replica uses its own). The parent's
`update_step` (after Keras' decay formula) is used for IndexedSlices (sparse) gradients, `amsgrad`,
TPU strategies and variables that are not resource variables; other backends run the parent as is.
"""

from __future__ import annotations

import contextlib
import threading

import keras
import tensorflow as tf

# Dtypes the fused kernel is used for.
_FUSED_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64)


@tf.function(jit_compile=True, autograph=False)
def _decay_and_scale(var, grad, decay, scale):
  """var <- var - decay * var in place (resource handle); returns grad * scale. One fused pass.

  XLA contracts `var - var * decay` into a fused multiply-add; it rounds once instead of twice,
  which changes the result only when the exact value lies within ~decay ulp of a rounding
  boundary (decay = lr * wd ~ 1e-6). The Adam update itself stays in TensorFlow's kernel, whose
  rounding is Keras' (XLA would contract its moment updates too).
  """
  w = tf.raw_ops.ReadVariableOp(resource=var, dtype=grad.dtype)
  tf.raw_ops.AssignVariableOp(resource=var, value=w - w * decay)
  return grad * scale


@keras.saving.register_keras_serializable(package="bert_keras")
class FusedAdamW(keras.optimizers.AdamW):
  """`keras.optimizers.AdamW` with each dense update done by fused kernels (module docstring).

  Same constructor, config, slots and results (see the module docstring for the float32 rounding
  of 1 - beta2); a drop-in replacement. `with optimizer.gradient_scale(s): apply_gradients(...)`
  applies the gradients multiplied by the scalar `s` without a separate pass over them.
  """

  def __init__(self, *args, name=None, **kwargs):
    # Keras' default name, so variable paths ("adam_w/..._momentum") match AdamW's.
    super().__init__(*args, name=name or "adam_w", **kwargs)
    # Per thread: MirroredStrategy runs each replica's step (and so its apply_gradients call, up
    # to the merge call) in its own thread.
    self._local = threading.local()

  @contextlib.contextmanager
  def gradient_scale(self, scale):
    """Within this context, apply_gradients applies `scale` (a scalar tensor) * the gradients."""
    previous = getattr(self._local, "scale", None)
    self._local.scale = scale
    try:
      yield
    finally:
      self._local.scale = previous

  def _backend_update_step(self, grads, trainable_variables, learning_rate):
    scale = getattr(self._local, "scale", None)
    if scale is not None:
      # Through the merge call and `extended.update` alongside the learning rate, so each
      # replica's update gets its own replica's scale (update_step unpacks it).
      learning_rate = (learning_rate, scale)
    return super()._backend_update_step(grads, trainable_variables, learning_rate)

  def _apply_weight_decay(self, variables):
    if keras.backend.backend() == "tensorflow":
      return  # applied per variable inside update_step, right before its Adam update
    super()._apply_weight_decay(variables)

  def update_step(self, gradient, variable, learning_rate):
    scale = None
    if isinstance(learning_rate, tuple):
      learning_rate, scale = learning_rate
    handles = self._fused_handles(gradient, variable)
    if handles is None:
      if keras.backend.backend() == "tensorflow":
        self._keras_weight_decay(variable, learning_rate)
      if scale is not None:
        gradient = (tf.IndexedSlices(gradient.values * tf.cast(scale, gradient.dtype),
                                     gradient.indices, gradient.dense_shape)
                    if isinstance(gradient, tf.IndexedSlices)
                    else gradient * tf.cast(scale, gradient.dtype))
      return super().update_step(gradient, variable, learning_rate)
    var_handle, m_handle, v_handle = handles
    dtype = variable.dtype
    cast = lambda x: tf.cast(x, dtype)
    lr = cast(learning_rate)
    gradient = cast(gradient)
    if self.weight_decay is not None and self._use_weight_decay(variable):
      gradient = _decay_and_scale(var_handle, gradient, lr * cast(self.weight_decay),
                                  cast(1.0 if scale is None else scale))
    elif scale is not None:
      gradient = gradient * cast(scale)
    local_step = cast(self.iterations + 1)
    beta_1 = cast(self.beta_1)
    beta_2 = cast(self.beta_2)
    # The kernel forms lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t) itself.
    tf.raw_ops.ResourceApplyAdam(
        var=var_handle, m=m_handle, v=v_handle, beta1_power=tf.pow(beta_1, local_step),
        beta2_power=tf.pow(beta_2, local_step), lr=lr, beta1=beta_1, beta2=beta_2,
        epsilon=cast(self.epsilon), grad=gradient, use_locking=False)

  def _keras_weight_decay(self, variable, learning_rate):
    """Keras AdamW's decay of one variable (its `_apply_weight_decay` formula)."""
    if self.weight_decay is not None and self._use_weight_decay(variable):
      lr = tf.cast(learning_rate, variable.dtype)
      wd = tf.cast(self.weight_decay, variable.dtype)
      variable.assign_sub(variable * wd * lr)

  def _fused_handles(self, gradient, variable):
    """(var, m, v) resource handles when the fused kernel applies, else None."""
    if keras.backend.backend() != "tensorflow" or self.amsgrad:
      return None
    if isinstance(gradient, tf.IndexedSlices) or tf.as_dtype(variable.dtype) not in _FUSED_DTYPES:
      return None
    if _is_tpu_strategy(self._distribution_strategy) or _is_tpu_strategy(
        tf.distribute.get_strategy()):
      return None
    index = self._get_variable_index(variable)
    tensors = (variable, self._momentums[index], self._velocities[index])
    handles = []
    for t in tensors:
      t = t.value if isinstance(t, keras.Variable) else t
      try:  # a distributed variable has a handle only inside `strategy.extended.update`
        handle = t.handle if isinstance(t, tf.Variable) else None
      except (AttributeError, ValueError):
        handle = None
      if handle is None or handle.dtype != tf.resource:
        return None
      handles.append(handle)
    return handles


def _is_tpu_strategy(strategy) -> bool:
  """True under TPUStrategy (v1 or v2), whose variables the raw kernel must not touch."""
  return "TPU" in type(strategy).__name__
