"""The BERT Transformer encoder as a Keras 3 functional model (Devlin et al., 2018, section 3)."""

from __future__ import annotations

import keras
from keras import ops

from configs.model import ModelConfig
from bert_keras.models.attention_mask import AttentionMask
from bert_keras.models.position_embedding import PositionEmbedding
from bert_keras.models.transformer_block import TransformerBlock


@keras.saving.register_keras_serializable(package="bert_keras")
class ClsPooler(keras.layers.Layer):
  """Dense + tanh over the first ([CLS]) token: the paper's aggregate representation C."""

  def __init__(self, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.initializer_range = initializer_range

  def build(self, input_shape):
    self.dense = keras.layers.Dense(
        input_shape[-1], activation="tanh", name="dense", dtype=self.dtype_policy,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range))
    self.dense.build((input_shape[0], input_shape[-1]))
    self.built = True

  def call(self, sequence_output):
    return self.dense(sequence_output[:, 0, :])  # (batch, hidden)

  def get_config(self):
    config = super().get_config()
    config.update(initializer_range=self.initializer_range)
    return config


class TransformerStack:
  """Embeddings and the L Transformer blocks, wired into a functional graph; shared by
  `BertEncoder` and `GPTDecoder` so the two models differ only where the papers do.

  h0 = token + learned position [+ segment] embeddings, [LayerNorm,] dropout; then h_l =
  block(h_{l-1}) under a bidirectional or causal mask (BERT section 3; GPT-1 section 3.1).
  `type_ids=None` drops the segment embeddings (GPT-1 has none) and `embedding_layer_norm=False`
  the embedding LayerNorm (the released GPT-1 code feeds the dropped-out sum straight into
  block 0). Layer names are the checkpoint names: token_embedding, position_embedding,
  type_embedding, embeddings_layer_norm, transformer_layer_{i}.

  Attributes after construction: the layers (`token_embedding`, `position_embedding`, `blocks`,
  ...), `sequence_output` (batch, seq, H) and `encoder_outputs` (L tensors (batch, seq, H)).
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
    self.type_embedding = None
    if type_ids is not None:
      self.type_embedding = keras.layers.Embedding(
          max(config.type_vocab_size, 1), config.hidden_size, embeddings_initializer=init(),
          name="type_embedding", dtype=dtype)
    self.embeddings_layer_norm = None
    if embedding_layer_norm:
      self.embeddings_layer_norm = keras.layers.LayerNormalization(
          epsilon=config.layer_norm_epsilon, name="embeddings_layer_norm", dtype=dtype)
    self.embeddings_dropout = keras.layers.Dropout(config.dropout_rate, name="embeddings_dropout",
                                                   dtype=dtype)
    self.attention_mask = AttentionMask(causal=config.attention == "causal",
                                        name="attention_mask")
    self.blocks = [
        TransformerBlock(config.num_heads, config.intermediate_size, config.hidden_act,
                         config.dropout_rate, config.attention_dropout_rate,
                         config.layer_norm_epsilon, config.initializer_range,
                         name=f"transformer_layer_{i}", dtype=dtype)
        for i in range(config.num_layers)
    ]

    self.embeddings_sum = keras.layers.Add(name="embeddings_sum", dtype=dtype)

    # === Functional graph ===
    self.sequence_output, self.encoder_outputs = self.wire(word_ids, mask, type_ids)

  def wire(self, word_ids, mask, type_ids=None, last_block_positions=None):
    """Calls the layers on these (symbolic) inputs: (sequence output, every block's output).

    `last_block_positions` (batch, Q): the last block computes only its rows at those positions
    (TransformerBlock's `query_positions`), so the sequence output is (batch, Q, H). Wiring the
    same layers again adds a path through the same weights.
    """
    tokens = self.token_embedding(word_ids)  # (batch, seq, H)
    summands = [tokens, self.position_embedding(tokens)]
    if self.type_embedding is not None:
      summands.append(self.type_embedding(type_ids))
    x = self.embeddings_sum(summands)
    if self.embeddings_layer_norm is not None:
      x = self.embeddings_layer_norm(x)
    x = self.embeddings_dropout(x)
    attention_mask = self.attention_mask(mask)  # (batch, seq, seq)
    encoder_outputs = []
    for i, block in enumerate(self.blocks):
      if last_block_positions is not None and i == len(self.blocks) - 1:
        x = block(x, attention_mask, last_block_positions)  # (batch, Q, H)
      else:
        x = block(x, attention_mask)
      encoder_outputs.append(x)
    return x, encoder_outputs


@keras.saving.register_keras_serializable(package="bert_keras")
class BertEncoder(keras.Model):
  """Token + segment + learned position embeddings, LayerNorm, dropout, L post-LN blocks, pooler.

  Inputs (int32, (batch, seq)): `input_word_ids`, `input_mask` (1 = real token), `input_type_ids`.
  Outputs: `sequence_output` (batch, seq, H), `pooled_output` (batch, H), and `encoder_outputs`, the
  list of every block's output (for the feature-based approach, section 5.3).
  With attention="causal" the same stack is a left-to-right model (GPT-1, the LTR ablation).
  """

  def __init__(self, vocab_size: int = 30522, hidden_size: int = 768, num_layers: int = 12,
               num_heads: int = 12, intermediate_size: int = 3072, hidden_act: str = "gelu",
               dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1,
               max_position_embeddings: int = 512, type_vocab_size: int = 2,
               initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-12,
               attention: str = "bidirectional", dtype=None, **kwargs):
    # Validates every value, with the value in the message, before building anything.
    config = ModelConfig(
        vocab_size=vocab_size, hidden_size=hidden_size, num_layers=num_layers,
        num_heads=num_heads, intermediate_size=intermediate_size, hidden_act=hidden_act,
        dropout_rate=dropout_rate, attention_dropout_rate=attention_dropout_rate,
        max_position_embeddings=max_position_embeddings, type_vocab_size=type_vocab_size,
        initializer_range=initializer_range, layer_norm_epsilon=layer_norm_epsilon,
        attention=attention)

    # === Layers and functional model ===
    word_ids = keras.Input(shape=(None,), dtype="int32", name="input_word_ids")
    mask = keras.Input(shape=(None,), dtype="int32", name="input_mask")
    type_ids = keras.Input(shape=(None,), dtype="int32", name="input_type_ids")
    # Token + position + segment embeddings, LayerNorm, dropout, the L blocks.
    stack = TransformerStack(config, word_ids, mask, type_ids, dtype=dtype)
    x = stack.sequence_output
    encoder_outputs = stack.encoder_outputs
    pooler = ClsPooler(initializer_range, name="pooler", dtype=dtype)
    pooled = pooler(x)
    super().__init__(
        inputs={"input_word_ids": word_ids, "input_mask": mask, "input_type_ids": type_ids},
        outputs={"sequence_output": x, "pooled_output": pooled,
                 "encoder_outputs": encoder_outputs},
        **kwargs)

    # === Config ===
    self.model_config = config
    for key, value in config.to_dict().items():
      setattr(self, key, value)
    self.token_embedding = stack.token_embedding
    self.blocks = stack.blocks
    self.pooler = pooler
    self._stack = stack  # a plain object (not tracked): its layers are the model's

  def outputs_at(self, inputs: dict, positions) -> dict:
    """The encoder's outputs where only `positions` (batch, Q) of the sequence output are read.

    Functional API: call on symbolic inputs while building a model around the encoder. Returns
    {"sequence_output": (batch, Q, H), the rows at `positions` in that order, "pooled_output":
    the pooler over the first of them}. The rows equal the full encoder's, but its last block
    computes only those rows (`TransformerStack.wire`): BertPretrainer reads [CLS] and the
    masked positions, 21 rows of 128 at the paper's settings, so the last block does about 30%
    of its full FLOPs (its keys and values still come from every position).
    """
    x, _ = self._stack.wire(inputs["input_word_ids"], inputs["input_mask"],
                            inputs["input_type_ids"], last_block_positions=positions)
    return {"sequence_output": x, "pooled_output": self.pooler(x)}

  @classmethod
  def from_model_config(cls, config: ModelConfig, **kwargs) -> "BertEncoder":
    return cls(**config.to_dict(), **kwargs)

  def get_config(self):
    config = {"name": self.name, "trainable": self.trainable}
    config.update(self.model_config.to_dict())
    return config

  @classmethod
  def from_config(cls, config):
    return cls(**config)
