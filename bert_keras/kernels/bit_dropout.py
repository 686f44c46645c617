"""Dropout (Srivastava et al. 2014) keeping element i when lowbias32-hash(i, key) >= threshold: one
XLA kernel, the backward recomputes the mask. Forward + backward on 2 cores against Philox masks:
(8, 12, 128, 128) 5.1 -> 2.1 ms, (1024, 768) 2.1 -> 1.2 ms. The key comes from the layer's
SeedGenerator (checkpointed: resumed runs match).
"""

import keras
import tensorflow as tf

_WORDS = 1 << 32
_MAX_ELEMENTS = (1 << 31) - 1  # the element index is an int32 iota


def _lowbias32(h):
  h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, 16))
  h = h * tf.constant(0x7FEB352D, tf.uint32)
  h = tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, 15))
  h = h * tf.constant(0x846CA68B, tf.uint32)
  return tf.bitwise.bitwise_xor(h, tf.bitwise.right_shift(h, 16))


def _keep(shape, key, threshold):
  """Boolean mask of `shape`: hash(flat index, key) >= threshold (a uint32 scalar)."""
  index = tf.cast(tf.reshape(tf.range(shape.num_elements(), dtype=tf.int32), shape), tf.uint32)
  words = _lowbias32(_lowbias32(tf.bitwise.bitwise_xor(index, key[0])) + key[1])
  return words >= threshold


def _apply(x, keep, scale):
  return tf.where(keep, x * scale, tf.zeros([], x.dtype))


@tf.custom_gradient
def _dropout(x, key, threshold, scale):
  y = _apply(x, _keep(x.shape, key, threshold), scale)

  def grad(dy):
    return _apply(dy, _keep(x.shape, key, threshold), scale), None, None, None

  return y, grad


_fused_dropout = tf.function(_dropout, jit_compile=True, autograph=False)


def bit_dropout(layer: keras.layers.Dropout, x, training):
  """`layer(x, training=training)` with the hashed mask (a noise_shape takes Keras' path)."""
  if not training or layer.rate == 0.0 or layer.noise_shape is not None:
    return layer(x, training=training)
  if not x.shape.is_fully_defined() or x.shape.num_elements() > _MAX_ELEMENTS:
    return layer(x, training=training)
  threshold = min(int(round(layer.rate * _WORDS)), _WORDS - 1)
  seed = layer.seed_generator.next()
  # Keras' own int64 -> int32 seed mapping (tensorflow backend `_cast_seed`), then its bits.
  key = tf.bitcast(tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32), tf.uint32)
  threshold_word = tf.constant(threshold, tf.uint32)
  scale = tf.constant(_WORDS / (_WORDS - threshold), x.dtype)
  return _fused_dropout(x, key, threshold_word, scale)
