"""The masked-LM head: transform, then an output projection tied to the token embedding."""

import keras
from keras import ops

from bert_keras.models.activations import get_activation
from bert_keras.models.config_layer import ConfigLayer


@keras.saving.register_keras_serializable(package="bert_keras")
class MaskedLMHead(ConfigLayer):
  """Dense + activation + LayerNorm, then logits = x @ E^T + b, E the token embedding table (tied as
  in the released code; passed in, not in the config: the owning model rewires it)."""

  CONFIG = ("hidden_act", "layer_norm_epsilon", "initializer_range")

  def __init__(self, token_embedding: keras.layers.Embedding, hidden_act: str = "gelu",
               layer_norm_epsilon: float = 1e-12, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.token_embedding = token_embedding
    self.keep_config(locals())

  def build(self, input_shape):
    hidden = input_shape[-1]
    self.transform = keras.layers.Dense(
        hidden, activation=get_activation(self.hidden_act), name="transform",
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range),
        dtype=self.dtype_policy)
    self.transform.build(input_shape)
    self.layer_norm = keras.layers.LayerNormalization(
        epsilon=self.layer_norm_epsilon, name="layer_norm", dtype=self.dtype_policy)
    self.layer_norm.build(input_shape)
    vocab_size = self.token_embedding.input_dim
    self.output_bias = self.add_weight(name="output_bias", shape=(vocab_size,),
                                       initializer="zeros")
    self.built = True

  def call(self, x):
    # x: (batch, positions, hidden) -> logits (batch, positions, vocab)
    # Flattened rows: one 2-D GEMM each way (a batched einsum made a (batch, vocab, hidden) gradient).
    shape = ops.shape(x)
    rows = ops.reshape(x, (-1, shape[-1]))  # (batch * positions, hidden)
    rows = self.layer_norm(self.transform(rows))
    table = ops.cast(self.token_embedding.embeddings, rows.dtype)  # (vocab, hidden)
    logits = ops.matmul(rows, ops.transpose(table))  # (batch * positions, vocab)
    logits = logits + ops.cast(self.output_bias, logits.dtype)
    return ops.reshape(logits, (shape[0], shape[1], -1))
