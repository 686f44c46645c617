"""A small TransformerBlock with non-trivial LayerNorms, random inputs, and the block's math in
float64 numpy: the reference the block's tests compare with."""

import keras
import numpy as np
from scipy.special import erf

from bert_keras.models.transformer_block import TransformerBlock

HIDDEN, HEADS, FFN = 32, 4, 64


def block(**kwargs):
  keras.utils.set_random_seed(0)
  block = TransformerBlock(num_heads=HEADS, intermediate_size=FFN, **kwargs)
  block.build((None, None, HIDDEN))
  rng = np.random.default_rng(7)  # non-trivial gamma and beta, so their roles cannot swap
  for norm in (block.attention_layer_norm, block.output_layer_norm):
    norm.gamma.assign(rng.normal(1.0, 0.3, HIDDEN).astype("float32"))
    norm.beta.assign(rng.normal(0.0, 0.3, HIDDEN).astype("float32"))
  return block


def reference(block, x, mask):
  """The post-LN block (Vaswani et al. 2017, section 3; BERT's GELU) in float64 numpy."""
  weights = lambda layer: [np.float64(w.numpy()) for w in layer.weights]

  def dense(layer, h):
    kernel, bias = weights(layer)
    return h @ kernel + bias

  def layer_norm(layer, h):
    gamma, beta = weights(layer)
    centered = h - h.mean(-1, keepdims=True)
    variance = (centered ** 2).mean(-1, keepdims=True)
    return centered / np.sqrt(variance + layer.epsilon) * gamma + beta

  x = np.float64(x)
  batch, seq, hidden = x.shape
  head_dim = hidden // HEADS
  qkv = dense(block.qkv_dense, x).reshape(batch, seq, 3, HEADS, head_dim)
  q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))  # (batch, heads, seq, dim)
  scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim) + (1.0 - mask[:, None]) * -10000.0
  probs = np.exp(scores - scores.max(-1, keepdims=True))
  probs /= probs.sum(-1, keepdims=True)
  context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
  h = layer_norm(block.attention_layer_norm, x + dense(block.attention_output_dense, context))
  inner = dense(block.intermediate_dense, h)
  gelu = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
  return layer_norm(block.output_layer_norm, h + dense(block.output_dense, gelu))


def inputs(batch, seq, causal, seed):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(batch, seq, HIDDEN)).astype("float32")
  lengths = rng.integers(1, seq + 1, size=batch)
  mask = (np.arange(seq)[None, None, :] < lengths[:, None, None]).astype("float32")
  mask = np.broadcast_to(mask, (batch, seq, seq)).copy()
  if causal:
    mask *= np.tril(np.ones((seq, seq), "float32"))[None]
  return x, mask
