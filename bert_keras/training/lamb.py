"""The paper's LAMB: You et al. 2019, "Large Batch Optimization for Deep Learning: Training BERT
in 76 minutes" (arXiv 1904.00962). Per variable w, gradient g, step t (1-based):

  m <- beta1 m + (1 - beta1) g;        v <- beta2 v + (1 - beta2) g^2
  u = m_hat / (sqrt(v_hat) + epsilon) + wd w,   m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t)
  r = ||w|| / ||u|| if both norms > 0, else 1;  w <- w - lr r u

Why not `keras.optimizers.Lamb`: Keras decays outside the trust ratio and adapts LayerNorm weights
and biases; the paper's BERT runs leave those (`exclude_from_weight_decay`) out of both decay and
adaptation. Bias correction as in the paper's Algorithm 2 and TF Model Garden. Slots are Keras
Lamb's, so checkpoints move between the two.
"""

from __future__ import annotations

import keras
from keras import ops
import tensorflow as tf

from bert_keras.training import keras_internals
from bert_keras.training.bias_correction import one_minus_power


@keras.saving.register_keras_serializable(package="bert_keras")
class Lamb(keras_internals.CollectiveUpdateHooks, keras.optimizers.Optimizer):
  """`keras.optimizers.Lamb`'s arguments; epsilon defaults to BERT's 1e-6."""

  def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
               weight_decay=None, name=None, **kwargs):
    super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                     name=name or "lamb", **kwargs)
    self.beta_1 = beta_1
    self.beta_2 = beta_2
    self.epsilon = epsilon

  def build(self, var_list):
    if self.built:
      return
    super().build(var_list)
    self._momentums, self._velocities = self.add_optimizer_variables(
        var_list, ["momentum", "velocity"])

  decays_before_update = False  # the decay is inside `u`, within the trust ratio

  def update_step(self, gradient, variable, learning_rate):
    dtype = variable.dtype
    if isinstance(gradient, tf.IndexedSlices):
      # The moments and the trust ratio involve every row of the variable.
      gradient = tf.convert_to_tensor(gradient)
    lr = ops.cast(learning_rate, dtype)
    gradient = ops.cast(gradient, dtype)
    local_step = ops.cast(self.iterations + 1, dtype)
    m, v = keras_internals.adam_slots(self, variable)
    self.assign_add(m, ops.multiply(ops.subtract(gradient, m), 1 - self.beta_1))
    self.assign_add(v, ops.multiply(ops.subtract(ops.square(gradient), v), 1 - self.beta_2))
    m_hat = ops.divide(m, one_minus_power(self.beta_1, local_step, dtype))
    v_hat = ops.divide(v, one_minus_power(self.beta_2, local_step, dtype))
    update = ops.divide(m_hat, ops.add(ops.sqrt(v_hat), ops.cast(self.epsilon, dtype)))
    adapts = keras_internals.uses_weight_decay(self, variable)
    if self.weight_decay and adapts:
      update = ops.add(update, ops.multiply(ops.cast(self.weight_decay, dtype), variable))
    if adapts:
      w_norm = ops.sqrt(ops.sum(ops.square(variable)))
      u_norm = ops.sqrt(ops.sum(ops.square(update)))
      # 1 unless both norms are > 0; the inner `where` keeps 0 / 0 (NaN) out of the division.
      positive = ops.logical_and(ops.greater(w_norm, 0), ops.greater(u_norm, 0))
      ratio = ops.where(positive, ops.divide(w_norm, ops.where(positive, u_norm, 1.0)), 1.0)
      update = ops.multiply(ratio, update)
    self.assign_sub(variable, ops.multiply(lr, update))

  def get_config(self):
    config = super().get_config()
    config.update(beta_1=self.beta_1, beta_2=self.beta_2, epsilon=self.epsilon)
    return config
