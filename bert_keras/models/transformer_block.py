"""One post-LayerNorm Transformer block (Vaswani et al. 2017, section 3), as in BERT and GPT-1: the
reference implementation (faster CPU version of the same contract: kernels/cpu_transformer_block.py).
"""

import math

import keras
from keras import ops

from bert_keras.models.activations import get_activation
from bert_keras.models.config_layer import ConfigLayer

# Additive bias for masked attention logits. The original uses -10000; it also fits in float16.
MASK_BIAS = -10000.0


@keras.saving.register_keras_serializable(package="bert_keras")
class TransformerBlock(ConfigLayer):
  """Self-attention + feed-forward, each followed by dropout, residual add and LayerNorm.

  Query, key and value share one fused (H, 3H) projection: one matmul instead of three.
  Checkpoint converters split it back into Q, K and V.
  """

  CONFIG = ("num_heads", "intermediate_size", "hidden_act", "dropout_rate", "attention_dropout_rate",
            "layer_norm_epsilon", "initializer_range")

  def __init__(self, num_heads: int, intermediate_size: int, hidden_act: str = "gelu",
               dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1,
               layer_norm_epsilon: float = 1e-12, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.keep_config(locals())

  def build(self, input_shape):
    hidden = input_shape[-1]
    if hidden % self.num_heads:
      raise ValueError(f"hidden_size={hidden} is not divisible by num_heads={self.num_heads}")
    self.head_dim = hidden // self.num_heads
    init = lambda: keras.initializers.TruncatedNormal(stddev=self.initializer_range)
    dense = lambda units, name, **kw: keras.layers.Dense(
        units, kernel_initializer=init(), name=name, dtype=self.dtype_policy, **kw)
    layer_norm = lambda name: keras.layers.LayerNormalization(
        epsilon=self.layer_norm_epsilon, name=name, dtype=self.dtype_policy)
    self.qkv_dense = dense(3 * hidden, "qkv")
    self.qkv_dense.build(input_shape)
    self.attention_output_dense = dense(hidden, "attention_output")
    self.attention_output_dense.build(input_shape)
    self.attention_layer_norm = layer_norm("attention_layer_norm")
    self.attention_layer_norm.build(input_shape)
    self.intermediate_dense = dense(self.intermediate_size, "intermediate",
                                    activation=get_activation(self.hidden_act))
    self.intermediate_dense.build(input_shape)
    self.output_dense = dense(hidden, "output")
    self.output_dense.build(input_shape[:-1] + (self.intermediate_size,))
    self.output_layer_norm = layer_norm("output_layer_norm")
    self.output_layer_norm.build(input_shape)
    self.attention_dropout = keras.layers.Dropout(self.attention_dropout_rate,
                                                  dtype=self.dtype_policy)
    self.hidden_dropout = keras.layers.Dropout(self.dropout_rate, dtype=self.dtype_policy)
    self.built = True

  def call(self, x, attention_mask, training=None):
    """x: (batch, seq, hidden); attention_mask: (batch, seq, seq), 1 = may attend."""
    batch, seq = ops.shape(x)[0], ops.shape(x)[1]
    heads, head_dim = self.num_heads, self.head_dim

    # Self-attention
    qkv = ops.reshape(self.qkv_dense(x), (batch, seq, 3, heads, head_dim))
    q, k, v = ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 3)  # (batch, heads, seq, head_dim)
    scores = ops.matmul(q, ops.swapaxes(k, 2, 3)) / math.sqrt(head_dim)  # (batch, heads, seq, seq)
    scores += (1.0 - ops.cast(attention_mask[:, None], scores.dtype)) * MASK_BIAS
    probs = self.attention_dropout(ops.softmax(scores, axis=-1), training=training)
    context = ops.transpose(ops.matmul(probs, v), (0, 2, 1, 3))  # (batch, seq, heads, head_dim)
    attention = self.attention_output_dense(ops.reshape(context, (batch, seq, heads * head_dim)))
    x = self.attention_layer_norm(x + self.hidden_dropout(attention, training=training))

    # Feed-forward
    ffn = self.output_dense(self.intermediate_dense(x))  # (batch, seq, hidden)
    return self.output_layer_norm(x + self.hidden_dropout(ffn, training=training))
