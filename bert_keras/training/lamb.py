"""The paper's LAMB: You et al. 2019, "Large Batch Optimization for Deep Learning: Training BERT
in 76 minutes" (arXiv 1904.00962).

Why not `keras.optimizers.Lamb`: Keras applies weight decay as a separate decoupled step before the
update (var <- var - lr wd var, outside the trust ratio) and rescales every variable by the trust
ratio, LayerNorm weights and biases included. The paper's LAMB puts the decay inside the update
whose norm the trust ratio divides by, and its BERT runs leave LayerNorm weights and biases out of
both the decay and the layer adaptation. Per variable w with gradient g, at step t (1-based):

  m <- beta1 m + (1 - beta1) g;        v <- beta2 v + (1 - beta2) g^2
  m_hat = m / (1 - beta1^t);           v_hat = v / (1 - beta2^t)
  u = m_hat / (sqrt(v_hat) + epsilon) + wd w          (wd w only for variables with weight decay)
  r = ||w|| / ||u|| if both norms > 0, else 1         (only for variables with layer adaptation;
                                                        else r = 1)
  w <- w - lr r u

The bias correction is the paper's (Algorithm 2 of the ICLR 2020 version) and that of the
TensorFlow Addons / TF Model Garden LAMB, the TensorFlow implementation used for BERT (the ALBERT
release's `lamb_optimizer.py` omits it, as the original BERT code's AdamW does). The trust-ratio
scaling function phi is the identity, as in those implementations.

Exclusions: a variable excluded from weight decay (`exclude_from_weight_decay`, Keras' rule: a
listed variable, or a name matching one of the given substrings) is excluded from layer adaptation
too, the Addons default (`exclude_from_layer_adaptation=None`). optimization.py excludes the same
names as for AdamW (LayerNorm gamma/beta and biases), also when the decay rate is 0.

Everything else is Keras': the learning rate (schedules included), gradient clipping
(`global_clipnorm` etc.), `LossScaleOptimizer` wrapping, and the distribution: Keras runs
`update_step` once per variable inside `strategy.extended.update`, where `variable` is the local
replica's copy, so each replica computes the norms of its own (identical) copy and no cross-replica
communication is needed. The slots are Keras Lamb's (`momentum`, `velocity`, one each per
variable, default name "lamb"), so checkpoints of either restore into the other: the state means
the same, only the update differs.
"""

from __future__ import annotations

import keras
from keras import ops
import tensorflow as tf

from bert_keras.training import keras_internals
from bert_keras.training.bias_correction import one_minus_power


@keras.saving.register_keras_serializable(package="bert_keras")
class Lamb(keras_internals.CollectiveUpdateHooks, keras.optimizers.Optimizer):
  """The paper's LAMB (module docstring): Adam moments, weight decay inside the update, and a
  per-variable trust ratio ||w|| / ||u||, with LayerNorm weights and biases (whatever
  `exclude_from_weight_decay` names) neither decayed nor adapted.

  Constructor arguments are those of `keras.optimizers.Lamb` (the decay rate is `weight_decay`);
  epsilon defaults to BERT's 1e-6.
  """

  def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
               weight_decay=None, name=None, **kwargs):
    super().__init__(learning_rate=learning_rate, weight_decay=weight_decay,
                     name=name or "lamb", **kwargs)
    self.beta_1 = beta_1
    self.beta_2 = beta_2
    self.epsilon = epsilon

  def build(self, var_list):
    """One first-moment (`momentum`) and one second-moment (`velocity`) slot per variable."""
    if self.built:
      return
    super().build(var_list)
    self._momentums, self._velocities = self.add_optimizer_variables(
        var_list, ["momentum", "velocity"])

  # The decay is part of the update `u` (update_step), inside the trust ratio; Keras' separate
  # decoupled decay pass before the update must not run as well.
  decays_before_update = False

  def _use_layer_adaptation(self, variable) -> bool:
    """Whether the trust ratio scales this variable's update: the weight-decay exclusion rule."""
    return keras_internals.uses_weight_decay(self, variable)

  def update_step(self, gradient, variable, learning_rate):
    """The LAMB update of one variable (module docstring)."""
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
    if self.weight_decay and keras_internals.uses_weight_decay(self, variable):
      update = ops.add(update, ops.multiply(ops.cast(self.weight_decay, dtype), variable))
    if self._use_layer_adaptation(variable):
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
