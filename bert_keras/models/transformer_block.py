"""One post-LayerNorm Transformer block, as in the original BERT and GPT-1 code."""

import math

import keras
from keras import ops

from bert_keras.models.activations import get_activation

# Additive bias for masked attention logits. The original uses -10000; it also fits in float16.
_MASK_BIAS = -10000.0


@keras.saving.register_keras_serializable(package="bert_keras")
class TransformerBlock(keras.layers.Layer):
  """Self-attention + feed-forward, each followed by dropout, residual add and LayerNorm.

  Query, key and value share one fused (H, 3H) projection: one matmul instead of three, which is
  measurably faster on CPU and GPU. Checkpoint converters split it back into Q, K and V.
  """

  def __init__(self, num_heads: int, intermediate_size: int, hidden_act: str = "gelu",
               dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1,
               layer_norm_epsilon: float = 1e-12, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.num_heads = num_heads
    self.intermediate_size = intermediate_size
    self.hidden_act = hidden_act
    self.dropout_rate = dropout_rate
    self.attention_dropout_rate = attention_dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    self.initializer_range = initializer_range

  def build(self, input_shape):
    hidden = input_shape[-1]
    if hidden % self.num_heads:
      raise ValueError(f"hidden_size={hidden} is not divisible by num_heads={self.num_heads}")
    self.head_dim = hidden // self.num_heads
    init = lambda: keras.initializers.TruncatedNormal(stddev=self.initializer_range)
    self.qkv_dense = keras.layers.Dense(3 * hidden, kernel_initializer=init(), name="qkv",
                                        dtype=self.dtype_policy)
    self.qkv_dense.build(input_shape)
    self.attention_output_dense = keras.layers.Dense(
        hidden, kernel_initializer=init(), name="attention_output", dtype=self.dtype_policy)
    self.attention_output_dense.build(input_shape[:-1] + (hidden,))
    self.attention_layer_norm = keras.layers.LayerNormalization(
        epsilon=self.layer_norm_epsilon, name="attention_layer_norm", dtype=self.dtype_policy)
    self.attention_layer_norm.build(input_shape)
    self.intermediate_dense = keras.layers.Dense(
        self.intermediate_size, kernel_initializer=init(),
        activation=get_activation(self.hidden_act), name="intermediate", dtype=self.dtype_policy)
    self.intermediate_dense.build(input_shape)
    self.output_dense = keras.layers.Dense(hidden, kernel_initializer=init(), name="output",
                                           dtype=self.dtype_policy)
    self.output_dense.build(input_shape[:-1] + (self.intermediate_size,))
    self.output_layer_norm = keras.layers.LayerNormalization(
        epsilon=self.layer_norm_epsilon, name="output_layer_norm", dtype=self.dtype_policy)
    self.output_layer_norm.build(input_shape)
    self.attention_dropout = keras.layers.Dropout(self.attention_dropout_rate, dtype=self.dtype_policy)
    self.hidden_dropout = keras.layers.Dropout(self.dropout_rate, dtype=self.dtype_policy)
    self.built = True

  def call(self, x, attention_mask, training=None):
    # x: (batch, seq, hidden); attention_mask: (batch, seq_q, seq_k) with 1 = may attend.
    batch, seq = ops.shape(x)[0], ops.shape(x)[1]
    qkv = self.qkv_dense(x)  # (batch, seq, 3 * hidden)
    qkv = ops.reshape(qkv, (batch, seq, 3, self.num_heads, self.head_dim))
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]  # each (batch, seq, heads, head_dim)
    scores = ops.einsum("bqhd,bkhd->bhqk", q, k)  # (batch, heads, seq_q, seq_k)
    scores = scores * ops.cast(1.0 / math.sqrt(self.head_dim), scores.dtype)
    bias = (1.0 - ops.cast(attention_mask[:, None, :, :], scores.dtype)) * _MASK_BIAS
    probs = ops.softmax(scores + ops.cast(bias, scores.dtype), axis=-1)
    probs = self.attention_dropout(probs, training=training)
    context = ops.einsum("bhqk,bkhd->bqhd", probs, v)  # (batch, seq, heads, head_dim)
    context = ops.reshape(context, (batch, seq, self.num_heads * self.head_dim))
    attention = self.hidden_dropout(self.attention_output_dense(context), training=training)
    x = self.attention_layer_norm(x + attention)
    ffn = self.output_dense(self.intermediate_dense(x))
    ffn = self.hidden_dropout(ffn, training=training)
    return self.output_layer_norm(x + ffn)

  def get_config(self):
    config = super().get_config()
    config.update(num_heads=self.num_heads, intermediate_size=self.intermediate_size,
                  hidden_act=self.hidden_act, dropout_rate=self.dropout_rate,
                  attention_dropout_rate=self.attention_dropout_rate,
                  layer_norm_epsilon=self.layer_norm_epsilon,
                  initializer_range=self.initializer_range)
    return config
