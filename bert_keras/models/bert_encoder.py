"""The BERT Transformer encoder as a Keras 3 functional model (Devlin et al., 2018, section 3)."""

from __future__ import annotations

import keras

from bert_keras.models.backbone import Backbone, TransformerStack, model_config_from
from bert_keras.models.config_layer import ConfigLayer


@keras.saving.register_keras_serializable(package="bert_keras")
class ClsPooler(ConfigLayer):
  """Dense + tanh over the first ([CLS]) token: the paper's aggregate representation C."""

  CONFIG = ("initializer_range",)

  def __init__(self, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.keep_config(locals())

  def build(self, input_shape):
    self.dense = keras.layers.Dense(
        input_shape[-1], activation="tanh", name="dense", dtype=self.dtype_policy,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range))
    self.dense.build((input_shape[0], input_shape[-1]))
    self.built = True

  def call(self, sequence_output):
    return self.dense(sequence_output[:, 0, :])  # (batch, hidden)


@keras.saving.register_keras_serializable(package="bert_keras")
class BertEncoder(Backbone):
  """Token + segment + learned position embeddings, LayerNorm, dropout, L post-LN blocks, pooler.
  Outputs `sequence_output`, `pooled_output` and `encoder_outputs` (every block's, section 5.3);
  attention="causal": a left-to-right model (the LTR ablation).
  """

  def __init__(self, vocab_size: int = 30522, hidden_size: int = 768, num_layers: int = 12,
               num_heads: int = 12, intermediate_size: int = 3072, hidden_act: str = "gelu",
               dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1,
               max_position_embeddings: int = 512, type_vocab_size: int = 2,
               initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-12,
               attention: str = "bidirectional", dtype=None, **kwargs):
    config = model_config_from(locals())

    word_ids = keras.Input(shape=(None,), dtype="int32", name="input_word_ids")
    mask = keras.Input(shape=(None,), dtype="int32", name="input_mask")
    type_ids = keras.Input(shape=(None,), dtype="int32", name="input_type_ids")
    stack = TransformerStack(config, word_ids, mask, type_ids, dtype=dtype)
    pooler = ClsPooler(initializer_range, name="pooler", dtype=dtype)
    super().__init__(
        inputs={"input_word_ids": word_ids, "input_mask": mask, "input_type_ids": type_ids},
        outputs={"sequence_output": stack.sequence_output, "pooled_output": pooler(stack.sequence_output),
                 "encoder_outputs": stack.encoder_outputs},
        **kwargs)
    self.set_model_config(config, stack)
    self.pooler = pooler
