"""A transpose written as a one-operand einsum: oneDNN's _MklTranspose builds a reorder per call, 2x
the Einsum kernel's cost at batch 1 (0.12 ms more per op, 16 ops per BERT-mini call). Inference only.
"""

import tensorflow as tf


def permute(x, perm, training):
  """tf.transpose(x, perm); at inference (training falsy) as an einsum."""
  if training:
    return tf.transpose(x, perm)
  axes = "abcdefgh"[:len(perm)]
  return tf.einsum(f"{axes}->{''.join(axes[p] for p in perm)}", x)
