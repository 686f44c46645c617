"""Adam's bias-correction terms 1 - beta^t, accurate to float32 rounding at every step."""

import math

from keras import ops


def one_minus_power(beta: float, step, dtype):
  """1 - beta ** step as -expm1(step * log(beta)), log(beta) in float64. Keras' float32 form is
  1.3e-5 too small at t = 1 for beta2 = 0.999 (float32(0.999) = 0.999 + 1.3e-8, then cancellation)."""
  return ops.negative(ops.expm1(ops.multiply(step, ops.cast(math.log(beta), dtype))))
