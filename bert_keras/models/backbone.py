"""What BertEncoder and GPTDecoder share, and the models taking one by composition."""

from __future__ import annotations

import dataclasses
from typing import Mapping

import keras
from keras import ops

from bert_keras.models.attention_mask import AttentionMask
from bert_keras.models.position_embedding import PositionEmbedding
from bert_keras.models.transformer_block import TransformerBlock
from bert_keras.configs.model import ModelConfig


@keras.saving.register_keras_serializable(package="bert_keras")
class FlattenSequences(keras.layers.Layer):
  """(batch, k, seq) -> (batch * k, seq): each choice (or ordering) goes through the backbone alone."""

  def call(self, x):
    return ops.reshape(x, (-1, ops.shape(x)[-1]))


class TransformerStack:
  """Embeddings and the L Transformer blocks, wired on symbolic inputs.

  h0 = token + learned position [+ segment] embeddings, [LayerNorm,] dropout; then h_l =
  block(h_{l-1}) under a bidirectional or causal mask (BERT section 3; GPT-1 section 3.1, which has
  no segments and no embedding LayerNorm: `type_ids=None`, `embedding_layer_norm=False`).
  """

  def __init__(self, config: ModelConfig, word_ids, mask, type_ids=None, *,
               embedding_layer_norm: bool = True, dtype=None):
    init = lambda: keras.initializers.TruncatedNormal(stddev=config.initializer_range)

    # === Layers ===
    self.token_embedding = keras.layers.Embedding(
        config.vocab_size, config.hidden_size, embeddings_initializer=init(),
        name="token_embedding", dtype=dtype)
    self.position_embedding = PositionEmbedding(
        config.max_position_embeddings, config.initializer_range, name="position_embedding",
        dtype=dtype)
    self.blocks = [
        TransformerBlock(config.num_heads, config.intermediate_size, config.hidden_act,
                         config.dropout_rate, config.attention_dropout_rate,
                         config.layer_norm_epsilon, config.initializer_range,
                         name=f"transformer_layer_{i}", dtype=dtype)
        for i in range(config.num_layers)
    ]

    # === Functional graph ===
    tokens = self.token_embedding(word_ids)  # (batch, seq, H)
    summands = [tokens, self.position_embedding(tokens)]
    if type_ids is not None:
      summands.append(keras.layers.Embedding(
          max(config.type_vocab_size, 1), config.hidden_size, embeddings_initializer=init(),
          name="type_embedding", dtype=dtype)(type_ids))
    x = keras.layers.Add(name="embeddings_sum", dtype=dtype)(summands)
    if embedding_layer_norm:
      x = keras.layers.LayerNormalization(epsilon=config.layer_norm_epsilon,
                                          name="embeddings_layer_norm", dtype=dtype)(x)
    x = keras.layers.Dropout(config.dropout_rate, name="embeddings_dropout", dtype=dtype)(x)
    attention_mask = AttentionMask(causal=config.attention == "causal",
                                   name="attention_mask")(mask)  # (batch, seq, seq)
    self.encoder_outputs = []
    for block in self.blocks:
      x = block(x, attention_mask)  # (batch, seq, H)
      self.encoder_outputs.append(x)
    self.sequence_output = x


def model_config_from(arguments: Mapping) -> ModelConfig:
  """The ModelConfig of a backbone constructor's `locals()`, validated before anything is built."""
  return ModelConfig(**{field.name: arguments[field.name]
                        for field in dataclasses.fields(ModelConfig)})


class Backbone(keras.Model):
  """A functional Transformer stack described by a ModelConfig (`set_model_config` after init)."""

  def set_model_config(self, config: ModelConfig, stack: TransformerStack) -> None:
    """Every config field as an attribute (`hidden_size`, ...), and the layers heads reuse."""
    self.model_config = config
    for key, value in config.to_dict().items():
      setattr(self, key, value)
    self.token_embedding = stack.token_embedding
    self.position_embedding = stack.position_embedding
    self.blocks = stack.blocks

  @classmethod
  def from_model_config(cls, config: ModelConfig, **kwargs):
    return cls(**config.to_dict(), **kwargs)

  def get_config(self):
    return {"name": self.name, "trainable": self.trainable, **self.model_config.to_dict()}

  @classmethod
  def from_config(cls, config):
    return cls(**config)


class BackboneTaskModel(keras.Model):
  """A functional model around a backbone (argument `BACKBONE`), its constructor arguments its config."""

  BACKBONE = "encoder"

  def set_task_config(self, backbone: keras.Model, **arguments) -> None:
    setattr(self, self.BACKBONE, backbone)
    self._task_config = arguments
    for key, value in arguments.items():
      setattr(self, key, value)

  def get_config(self):
    config = {"name": self.name, "trainable": self.trainable}
    for key in self._task_config:  # current values, tuples as the lists JSON gives back
      value = getattr(self, key)
      config[key] = list(value) if isinstance(value, (list, tuple)) else value
    config[self.BACKBONE] = keras.saving.serialize_keras_object(getattr(self, self.BACKBONE))
    return config

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    config[cls.BACKBONE] = keras.saving.deserialize_keras_object(config[cls.BACKBONE])
    return cls(**config)
