"""The private Keras APIs the training code relies on (keras_internals.py) are still there; a Keras
that changes them fails here with a message naming its version."""

import keras
import pytest
import tensorflow as tf

from bert_keras.training import keras_internals


def test_the_installed_keras_provides_what_training_relies_on():
  keras_internals.check()


@pytest.mark.parametrize("name", ["_use_weight_decay", "_backend_update_step"])
def test_a_keras_without_an_api_fails_naming_its_version(monkeypatch, name):
  for owner in keras.optimizers.Optimizer.__mro__:
    if name in vars(owner):
      monkeypatch.delattr(owner, name)
  with pytest.raises(RuntimeError, match=f"keras {keras.__version__} changed .*{name}"):
    keras_internals.check()


def test_a_changed_signature_fails_naming_its_version(monkeypatch):
  monkeypatch.setattr(keras.optimizers.Optimizer, "_get_variable_index",
                      lambda self, variable, extra: 0)
  with pytest.raises(RuntimeError, match=f"keras {keras.__version__}.*_get_variable_index"):
    keras_internals.check()


def test_the_accessors():
  variables = [tf.Variable(tf.ones((2,)), name="w"), tf.Variable(tf.ones((2,)), name="b")]
  optimizer = keras.optimizers.AdamW(weight_decay=0.1)
  optimizer.exclude_from_weight_decay(var_names=["b"])
  optimizer.build(variables)
  momentum, velocity = keras_internals.adam_slots(optimizer, variables[1])
  assert "momentum" in momentum.path and "velocity" in velocity.path
  assert [keras_internals.uses_weight_decay(optimizer, v) for v in variables] == [True, False]
  keras_internals.skip_gradient_all_reduce(optimizer)
  assert optimizer._all_reduce_sum_gradients([(1, 2)]) == [(1, 2)]
