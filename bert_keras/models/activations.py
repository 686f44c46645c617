"""Activation lookup shared by every layer, so `hidden_act` means the same thing everywhere."""

import functools

import keras


def get_activation(name: str):
  """Returns the activation for a config name: exact erf GELU (the paper's), its tanh form, or ReLU.

  bert_keras/kernels/fused_gelu.py holds the same GELUs as fused kernels for CPU training.
  """
  if name == "gelu":
    return functools.partial(keras.activations.gelu, approximate=False)
  if name == "gelu_tanh":
    return functools.partial(keras.activations.gelu, approximate=True)
  if name == "relu":
    return keras.activations.relu
  raise ValueError(f"hidden_act={name!r}; expected 'gelu', 'gelu_tanh' or 'relu'")
