"""Every private Keras 3.15 API the training code relies on, in one module; `check` fails naming
the installed version when a release changes one. Needed because the Trainer sums gradients over
replicas itself (to clip the summed gradient), and FusedAdamW needs the Adam slots and a per-replica
gradient scale carried across Keras' merge call; Keras has no public hook for either.
"""

from __future__ import annotations

import inspect

import keras

# (class, private attribute, its parameters after self) that the training code calls or overrides.
_RELIED_ON = (
    ("Optimizer", "_all_reduce_sum_gradients", ("grads_and_vars",)),
    ("Optimizer", "_backend_update_step", ("grads", "trainable_variables", "learning_rate")),
    ("Optimizer", "_apply_weight_decay", ("variables",)),
    ("Optimizer", "_clip_gradients", ("grads",)),
    ("Optimizer", "_use_weight_decay", ("variable",)),
    ("Optimizer", "_get_variable_index", ("variable",)),
)


def check() -> None:
  """RuntimeError naming the Keras version when an API relied on here is missing or changed."""
  problems = []
  for class_name, name, params in _RELIED_ON:
    method = getattr(getattr(keras.optimizers, class_name), name, None)
    if method is None:
      problems.append(f"keras.optimizers.{class_name}.{name} is gone")
      continue
    got = tuple(inspect.signature(method).parameters)[1:]
    if got != params:
      problems.append(f"keras.optimizers.{class_name}.{name}{got} (expected {params})")
  adam = keras.optimizers.AdamW()
  adam.build([keras.Variable(0.0)])
  for slots in ("_momentums", "_velocities"):
    if len(getattr(adam, slots, ())) != 1:
      problems.append(f"keras.optimizers.AdamW.{slots} no longer holds one slot per variable")
  if not hasattr(adam, "_distribution_strategy"):
    problems.append("keras.optimizers.AdamW._distribution_strategy is gone")
  if problems:
    raise RuntimeError(f"keras {keras.__version__} changed what bert_keras/training relies on "
                       f"(bert_keras/training/keras_internals.py): {'; '.join(problems)}")


def skip_gradient_all_reduce(optimizer: keras.optimizers.Optimizer) -> None:
  """The optimizer applies gradients as given: the caller has summed them over replicas."""
  inner = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer's
  if not hasattr(inner, "_all_reduce_sum_gradients"):
    check()  # raises, naming the version
  inner._all_reduce_sum_gradients = lambda grads_and_vars: list(grads_and_vars)


def uses_weight_decay(optimizer: keras.optimizers.Optimizer, variable) -> bool:
  """Whether `variable` is decayed (not excluded by `exclude_from_weight_decay`)."""
  return optimizer._use_weight_decay(variable)


def adam_slots(optimizer: keras.optimizers.Optimizer, variable) -> tuple:
  """(momentum, velocity) slot variables of `variable` in a built Adam-family optimizer."""
  index = optimizer._get_variable_index(variable)
  return optimizer._momentums[index], optimizer._velocities[index]


def distribution_strategy(optimizer: keras.optimizers.Optimizer):
  """The tf.distribute strategy the optimizer was created under."""
  return optimizer._distribution_strategy


class CollectiveUpdateHooks:
  """Keras' private per-`apply` hooks as public-named methods: `before_collective_update` (once per
  apply, in replica context; returns the learning rate each `update_step` gets), `clip_gradients`,
  `keras_weight_decay`; `decays_before_update = False` skips Keras' decay pass."""

  decays_before_update = True

  def before_collective_update(self, grads, variables, learning_rate):
    return learning_rate

  def keras_weight_decay(self, variables) -> None:
    super()._apply_weight_decay(variables)

  def clip_gradients(self, grads):
    return super()._clip_gradients(grads)

  def _clip_gradients(self, grads):
    return self.clip_gradients(grads)

  def _apply_weight_decay(self, variables):
    if self.decays_before_update:
      super()._apply_weight_decay(variables)

  def _backend_update_step(self, grads, trainable_variables, learning_rate):
    learning_rate = self.before_collective_update(grads, trainable_variables, learning_rate)
    return super()._backend_update_step(grads, trainable_variables, learning_rate)
