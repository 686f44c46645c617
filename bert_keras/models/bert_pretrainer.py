"""BERT's pretraining model: the encoder with masked-LM and next-sentence heads (section 3.1)."""

from __future__ import annotations

import keras
from keras import ops

from bert_keras.configs.training import OBJECTIVES
from bert_keras.models.backbone import BackboneTaskModel
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.masked_lm_head import MaskedLMHead


@keras.saving.register_keras_serializable(package="bert_keras")
class GatherPositions(keras.layers.Layer):
  """(batch, seq, hidden) gathered at (batch, P) positions -> (batch, P, hidden)."""

  def call(self, sequence, positions):
    positions = ops.cast(positions, "int32")[:, :, None]  # (batch, P, 1)
    return ops.take_along_axis(sequence, positions, axis=1)


@keras.saving.register_keras_serializable(package="bert_keras")
class BertPretrainer(BackboneTaskModel):
  """Encoder + heads for one of three objectives.

  - "mlm_nsp": the paper's. Masked-LM logits at `masked_lm_positions` (batch, P, vocab) and
    next-sentence logits over the pooled [CLS] output (batch, 2).
  - "mlm": the "No NSP" ablation (section 5.1); same inputs, no NSP head.
  - "ltr": the "LTR & No NSP" ablation; the encoder must be causal and every position i predicts
    token i+1, so `mlm_logits` covers the whole sequence (batch, seq, vocab).
  Labels and the loss live in `bert_keras.training.losses`, not in the model.
  """

  def __init__(self, encoder: BertEncoder, objective: str = "mlm_nsp", **kwargs):
    if objective not in OBJECTIVES:
      raise ValueError(f"objective={objective!r}; expected one of {OBJECTIVES}")
    if objective == "ltr" and encoder.attention != "causal":
      raise ValueError("objective='ltr' needs a causal encoder (attention='causal'), "
                       f"got attention={encoder.attention!r}")
    init = keras.initializers.TruncatedNormal(stddev=encoder.initializer_range)

    mlm_head = MaskedLMHead(encoder.token_embedding, encoder.hidden_act,
                            encoder.layer_norm_epsilon, encoder.initializer_range,
                            name="mlm_head", dtype=encoder.dtype_policy)
    nsp_head = keras.layers.Dense(2, kernel_initializer=init, name="nsp_head",
                                  dtype=encoder.dtype_policy)

    inputs = dict(encoder.input)
    encoder_outputs = encoder(inputs)
    sequence = encoder_outputs["sequence_output"]  # (batch, seq, H)
    outputs = {}
    if objective == "ltr":  # every position predicts the next token
      outputs["mlm_logits"] = mlm_head(sequence)
    else:
      positions = keras.Input(shape=(None,), dtype="int32", name="masked_lm_positions")
      inputs["masked_lm_positions"] = positions
      outputs["mlm_logits"] = mlm_head(GatherPositions(name="gather_masked")(sequence, positions))
    if objective == "mlm_nsp":
      outputs["nsp_logits"] = nsp_head(encoder_outputs["pooled_output"])
    # Logits in float32 for a stable softmax under mixed precision.
    outputs = {k: keras.layers.Activation("linear", dtype="float32", name=k)(v)
               for k, v in outputs.items()}
    super().__init__(inputs=inputs, outputs=outputs, **kwargs)
    self.set_task_config(encoder, objective=objective)
    self.mlm_head = mlm_head
    self.nsp_head = nsp_head if objective == "mlm_nsp" else None
