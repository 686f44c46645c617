"""A transpose written as a one-operand einsum: the same copy, without oneDNN's per-call setup.

Why: with oneDNN on (TF's default on x86) every Transpose op becomes _MklTranspose, which builds a
oneDNN reorder per call: at batch 1 that cost 2x the Einsum kernel's own (Eigen) transpose of the
BERT-mini attention tensors (0.12 ms more per op, 16 ops per call); equal at batch 32. Used by the
CPU block at inference only; training keeps Transpose (the fallback), whose gradient graph the
Trainer was tuned with. Equality: tests/kernels/test_cpu_block_inference.py.
"""

import tensorflow as tf


def permute(x, perm, training):
  """tf.transpose(x, perm); at inference (training falsy) as an einsum."""
  if training:
    return tf.transpose(x, perm)
  axes = "abcdefgh"[:len(perm)]
  return tf.einsum(f"{axes}->{''.join(axes[p] for p in perm)}", x)
