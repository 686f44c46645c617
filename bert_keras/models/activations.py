"""Activation lookup shared by every layer, so `hidden_act` means the same thing everywhere."""

import keras


def get_activation(name: str):
  """Returns the activation for a config name: exact erf GELU (the paper's), its tanh form, or ReLU."""
  if name == "gelu":
    return lambda x: keras.activations.gelu(x, approximate=False)
  if name == "gelu_tanh":
    return lambda x: keras.activations.gelu(x, approximate=True)
  if name == "relu":
    return keras.activations.relu
  raise ValueError(f"hidden_act={name!r}; expected 'gelu', 'gelu_tanh' or 'relu'")
