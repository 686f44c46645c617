"""Adam's bias-correction terms 1 - beta^t, accurate to float32 rounding at every step."""

import math

from keras import ops


def one_minus_power(beta: float, step, dtype):
  """1 - beta ** step, as -expm1(step * log(beta)) with log(beta) taken in float64.

  Why not `1 - ops.power(ops.cast(beta, dtype), step)` (Keras' Adam, AdamW and Lamb):
  float32(0.999) is 0.999 + 1.3e-8, so in float32 1 - beta2 ** t is 1.3e-5 too small (relative) at
  t = 1, and the rounding of beta ** t is magnified by the cancellation at every small t. Adam's
  update carries that error into every weight (LAMB's, into every update not rescaled by a trust
  ratio: the excluded variables and zero-norm ones). This form is accurate to float32 rounding for
  every step.
  """
  return ops.negative(ops.expm1(ops.multiply(step, ops.cast(math.log(beta), dtype))))
