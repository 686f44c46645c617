"""The GPT-1 decoder (Radford et al., 2018, section 3.1) from the same layers as BERT's encoder."""

from __future__ import annotations

import keras

from bert_keras.models.backbone import Backbone, TransformerStack, model_config_from


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTDecoder(Backbone):
  """h0 = U W_e + W_p, then L causal post-LN blocks: `BertEncoder(attention="causal")` without what
  GPT-1 lacks (segments, the embedding LayerNorm, the pooler); weights move between them by name.
  """

  def __init__(self, vocab_size: int = 40481, hidden_size: int = 768, num_layers: int = 12,
               num_heads: int = 12, intermediate_size: int = 3072, hidden_act: str = "gelu_tanh",
               dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1,
               max_position_embeddings: int = 512, type_vocab_size: int = 0,
               initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-5,
               attention: str = "causal", dtype=None, **kwargs):
    config = model_config_from(locals())
    if type_vocab_size != 0:
      raise ValueError(f"type_vocab_size={type_vocab_size}: GPT-1 has no segment embeddings; "
                       "use BertEncoder for a model with segments")
    if attention != "causal":
      raise ValueError(f"attention={attention!r}: a GPT decoder is left-to-right ('causal')")

    word_ids = keras.Input(shape=(None,), dtype="int32", name="input_word_ids")
    mask = keras.Input(shape=(None,), dtype="int32", name="input_mask")
    stack = TransformerStack(config, word_ids, mask, type_ids=None, embedding_layer_norm=False,
                             dtype=dtype)
    x, encoder_outputs = stack.sequence_output, stack.encoder_outputs  # lower-triangular mask
    super().__init__(inputs={"input_word_ids": word_ids, "input_mask": mask},
                     outputs={"sequence_output": x, "encoder_outputs": encoder_outputs},
                     **kwargs)
    self.set_model_config(config, stack)
