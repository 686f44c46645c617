"""Numeric precision by name: float32, mixed_bfloat16, or mixed_float16 with dynamic loss scaling."""

from __future__ import annotations

import keras

from bert_keras.configs.training import PRECISIONS
from bert_keras.errors import UserError


def set_precision(name: str) -> None:
  """Sets Keras' global dtype policy; call it before building the model."""
  if name not in PRECISIONS:
    raise UserError(f"precision={name!r}; expected one of {PRECISIONS}")
  keras.mixed_precision.set_global_policy(name)


def wrap_optimizer(optimizer: keras.optimizers.Optimizer, name: str) -> keras.optimizers.Optimizer:
  """float16 gradients underflow without loss scaling; bfloat16 has float32's range and needs none."""
  if name == "mixed_float16":
    return keras.optimizers.LossScaleOptimizer(optimizer)
  return optimizer
