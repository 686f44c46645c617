"""Inference LayerNorm in 9 ops, and for wide layers (hidden >= FUSED_LAYER_NORM_MIN_HIDDEN) in
the form grappler fuses: the Keras layer's values. (Which form a width takes, and the fused ops of
a loaded SavedModel: bench/check_graphs.py.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.kernels.fused_layer_norm import fused_layer_norm, inference_layer_norm
from bert_keras.kernels.host_tuning import FUSED_LAYER_NORM_MIN_HIDDEN
from bert_keras.models.transformer_block import TransformerBlock

WIDE = FUSED_LAYER_NORM_MIN_HIDDEN


def _norm(hidden, dtype=None):
  norm = keras.layers.LayerNormalization(epsilon=1e-12, dtype=dtype)
  norm.build((None, hidden))
  rng = np.random.default_rng(3)  # non-trivial gamma and beta, so their roles cannot swap
  norm.gamma.assign(rng.normal(1.0, 0.3, hidden))
  norm.beta.assign(rng.normal(0.0, 0.3, hidden))
  return norm


def test_fused_layer_norm_equals_the_keras_layer():
  hidden = 48
  norm = _norm(hidden)
  rng = np.random.default_rng(5)
  rows = np.concatenate([
      rng.normal(size=(20, hidden)) * 0.5 + 30.0,  # large shared offset
      rng.normal(size=(3, hidden)) * 1e-3,  # variance 1e-6: an epsilon of 1e-5 would show
  ]).astype("float32")
  expected = norm(rows).numpy()
  # Traced with a dynamic row count, as in a serving graph: grappler rewrites it on oneDNN.
  traced = tf.function(lambda r: fused_layer_norm(norm, r), autograph=False,
                       input_signature=[tf.TensorSpec([None, hidden])])
  # atol: rows at offset 30 carry float32 rounding of ~1e-5 in either form, and how much depends
  # on the CPU's kernels (3.3e-5 on an AMD EPYC); an epsilon of 1e-5 moves the small rows by 2.6.
  for got in (fused_layer_norm(norm, tf.constant(rows)), traced(tf.constant(rows))):
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-4, rtol=1e-4)
  assert traced(tf.zeros((0, hidden))).shape == (0, hidden)  # an empty row group


@pytest.mark.parametrize("hidden,dtype", [(WIDE, None), (WIDE // 2, None),
                                          (WIDE, "mixed_float16")])
def test_inference_layer_norm_equals_the_keras_layer_at_every_width(hidden, dtype):
  # Mixed precision: the Keras layer's own values, which normalise in float32.
  norm = _norm(hidden, dtype)
  rows = tf.constant(np.random.default_rng(0).normal(size=(6, hidden)) * 2.0 + 3.0,
                     norm.compute_dtype)
  fn = tf.function(lambda r: inference_layer_norm(norm, r), autograph=False,
                   input_signature=[tf.TensorSpec([None, hidden], norm.compute_dtype)])
  if dtype:
    np.testing.assert_array_equal(inference_layer_norm(norm, rows).numpy(), norm(rows).numpy())
  np.testing.assert_allclose(fn(rows).numpy(), norm(rows).numpy(), atol=1e-2 if dtype else 1e-4,
                             rtol=1e-4)


def _wide_block(head_groups):
  keras.utils.set_random_seed(0)
  block = TransformerBlock(num_heads=4, intermediate_size=64, dropout_rate=0.0,
                           attention_dropout_rate=0.0)
  block.build((None, None, WIDE))
  for norm in (block.attention_layer_norm, block.output_layer_norm):
    fresh = _norm(WIDE)
    norm.gamma.assign(fresh.gamma * tf.cast(np.float32(1.1), tf.float32))
    norm.beta.assign(fresh.beta)
  return CpuTransformerBlock(block, head_groups)


def _inputs(batch, seq, seed):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(batch, seq, WIDE)).astype("float32")
  lengths = rng.integers(1, seq + 1, size=batch)
  mask = (np.arange(seq)[None, None, :] < lengths[:, None, None]).astype("float32")
  return tf.constant(x), tf.constant(np.broadcast_to(mask, (batch, seq, seq)).copy())


_SPEC = [tf.TensorSpec([None, None, WIDE]), tf.TensorSpec([None, None, None])]


@pytest.mark.parametrize("groups", [1, 2])
def test_wide_block_inference_equals_training_and_the_reference(groups):
  block = _wide_block(groups)
  # Inference (LayerNorm in the fused form at this width), the training body (dropout 0, its own
  # LayerNorm) and the reference block.
  infer = tf.function(lambda x, m: block(x, m, training=False), input_signature=_SPEC,
                      autograph=False)
  train = tf.function(lambda x, m: block(x, m, training=True), autograph=False)
  reference = tf.function(lambda x, m: block.block(x, m, training=False), autograph=False)
  for batch, seq in ((2, 5), (1, 1), (0, 3)):
    x, mask = _inputs(batch, seq, seed=seq)
    got = infer(x, mask).numpy()
    np.testing.assert_allclose(got, train(x, mask).numpy(), atol=1e-5)
    np.testing.assert_allclose(got, reference(x, mask).numpy(), atol=1e-5)


def test_a_saved_wide_block_gives_the_in_memory_values(tmp_path):
  """After loading, grappler and oneDNN rewrite the runtime graph (their fusions:
  bench/check_graphs.py); the values stay the block's."""
  block = _wide_block(head_groups=1)  # head groups: tests/export/test_serving_head_groups.py
  module = tf.Module()
  module.block = block.block
  module.infer = tf.function(lambda x, m: block(x, m, training=False), input_signature=_SPEC,
                             autograph=False)
  tf.saved_model.save(module, str(tmp_path))
  loaded = tf.saved_model.load(str(tmp_path))
  x, mask = _inputs(2, 6, seed=1)
  np.testing.assert_allclose(loaded.infer(x, mask).numpy(), module.infer(x, mask).numpy(),
                             atol=1e-5)
