"""Keras AdamW whose dense update is TensorFlow's fused Adam kernel (one pass over the weights).

Why: Keras 3's `Adam.update_step` is a dozen separate element-wise ops per variable (sub, mul,
square, assign_add, sqrt, add, div, ...), each a full pass over a BERT-Base-sized tensor; on CPU the
optimizer alone took ~2.7 s of a BERT-Base step. `tf.raw_ops.ResourceApplyAdam` does the same update
in one fused, multi-threaded pass (~1.5 s in the same probe). It is the kernel the original BERT
release and tf.keras 2's Adam used.

The update is Keras' (Kingma & Ba 2015, algorithm 1 with the "epsilon hat" form, section 2):
  m <- m + (g - m)(1 - beta1);  v <- v + (g^2 - v)(1 - beta2)
  var <- var - lr_t m / (sqrt(v) + epsilon),   lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)
The one numerical difference: the kernel forms (1 - beta) in float32 from float32(beta), while Keras
rounds the float64 (1 - beta) to float32. For beta2 = 0.999 the two coefficients differ by 1.3e-5
relative (float32 spacing near 0.999), so `v` differs at that level and the weights far below it;
for betas with an exact float32 complement (e.g. 0.875, 0.998046875) the results agree to float32
rounding.

Everything else is inherited from `keras.optimizers.AdamW`, unchanged: decoupled weight decay
(Loshchilov & Hutter 2019) applied before the update in `_apply_weight_decay`, with the
`exclude_from_weight_decay` rules; slot variables (`momentum`, `velocity`) with the same names, so
checkpoints of either class restore into the other; `LossScaleOptimizer` wrapping; every
`tf.distribute` strategy (the update runs inside `strategy.extended.update`, where a mirrored
variable's `.handle` is the local replica's). The parent's `update_step` is used for IndexedSlices
(sparse) gradients, `amsgrad`, non-TensorFlow backends, TPU strategies and variables that are not
resource variables.
"""

from __future__ import annotations

import keras
import tensorflow as tf

# Dtypes ResourceApplyAdam has CPU/GPU kernels for.
_FUSED_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64)


@keras.saving.register_keras_serializable(package="bert_keras")
class FusedAdamW(keras.optimizers.AdamW):
  """`keras.optimizers.AdamW` with the dense update done by `tf.raw_ops.ResourceApplyAdam`.

  Same constructor, config, slots and results (see the module docstring for the float32 rounding
  of 1 - beta2); a drop-in replacement.
  """

  def __init__(self, *args, name=None, **kwargs):
    # Keras' default name, so variable paths ("adam_w/..._momentum") match AdamW's.
    super().__init__(*args, name=name or "adam_w", **kwargs)

  def update_step(self, gradient, variable, learning_rate):
    handles = self._fused_handles(gradient, variable)
    if handles is None:
      return super().update_step(gradient, variable, learning_rate)
    var_handle, m_handle, v_handle = handles
    dtype = variable.dtype
    lr = tf.cast(learning_rate, dtype)
    local_step = tf.cast(self.iterations + 1, dtype)
    beta_1 = tf.cast(self.beta_1, dtype)
    beta_2 = tf.cast(self.beta_2, dtype)
    # The kernel forms lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t) itself.
    tf.raw_ops.ResourceApplyAdam(
        var=var_handle, m=m_handle, v=v_handle, beta1_power=tf.pow(beta_1, local_step),
        beta2_power=tf.pow(beta_2, local_step), lr=lr, beta1=beta_1, beta2=beta_2,
        epsilon=tf.cast(self.epsilon, dtype), grad=tf.cast(gradient, dtype), use_locking=False)

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
