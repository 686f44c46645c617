"""BERT's pretraining model: the encoder with masked-LM and next-sentence heads (section 3.1)."""

from __future__ import annotations

import keras
import tensorflow as tf
from keras import ops

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.masked_lm_head import MaskedLMHead

OBJECTIVES = ("mlm_nsp", "mlm", "ltr")


@keras.saving.register_keras_serializable(package="bert_keras")
class GatherPositions(keras.layers.Layer):
  """(batch, seq, hidden) gathered at (batch, P) positions -> (batch, P, hidden)."""

  def call(self, sequence, positions):
    # A batched gather: its gradient is a scatter of (batch, P, hidden) rows. (take_along_axis
    # broadcast the index to (batch, P, hidden) and gathered, and differentiated, element-wise.)
    return tf.gather(sequence, ops.cast(positions, "int32"), axis=1, batch_dims=1)


@keras.saving.register_keras_serializable(package="bert_keras")
class BertPretrainer(keras.Model):
  """Encoder + heads for one of three objectives.

  - "mlm_nsp": the paper's. Masked-LM logits at `masked_lm_positions` (batch, P, vocab) and
    next-sentence logits over the pooled [CLS] output (batch, 2).
  - "mlm": the "No NSP" ablation (section 5.1); same inputs, no NSP head.
  - "ltr": the "LTR & No NSP" ablation; the encoder must be causal and every position i predicts
    token i+1, so `mlm_logits` covers the whole sequence (batch, seq, vocab).
  Labels and the loss live in `bert_keras.training.losses`, not in the model.

  last_block_all_positions: for "mlm_nsp" and "mlm" the heads read only [CLS] and the masked
  positions, so by default the encoder's last block computes just those rows (its keys and values
  still come from every position; `BertEncoder.outputs_at`): the same logits and gradients, 13% of
  the FLOPs off a BERT-mini step and 5.6% at Base. True keeps the whole last block (the graph of
  versions before this option; weights and checkpoints are the same either way). "ltr" reads every
  position and always runs the whole block.
  """

  def __init__(self, encoder: BertEncoder, objective: str = "mlm_nsp",
               last_block_all_positions: bool = False, **kwargs):
    if objective not in OBJECTIVES:
      raise ValueError(f"objective={objective!r}; expected one of {OBJECTIVES}")
    if objective == "ltr" and encoder.attention != "causal":
      raise ValueError("objective='ltr' needs a causal encoder (attention='causal'), "
                       f"got attention={encoder.attention!r}")
    init = keras.initializers.TruncatedNormal(stddev=encoder.initializer_range)

    # === Layers ===
    mlm_head = MaskedLMHead(encoder.token_embedding, encoder.hidden_act,
                            encoder.layer_norm_epsilon, encoder.initializer_range,
                            name="mlm_head", dtype=encoder.dtype_policy)
    nsp_head = keras.layers.Dense(2, kernel_initializer=init, name="nsp_head",
                                  dtype=encoder.dtype_policy)

    # === Functional model ===
    inputs = dict(encoder.input)
    outputs = {}
    if objective == "ltr":  # every position predicts the next token
      outputs["mlm_logits"] = mlm_head(encoder(inputs)["sequence_output"])
    else:
      positions = keras.Input(shape=(None,), dtype="int32", name="masked_lm_positions")
      inputs["masked_lm_positions"] = positions
      if not last_block_all_positions:
        # The heads read [CLS] (NSP) and the masked positions (MLM) only, so the last block
        # computes just those rows (BertEncoder.outputs_at); the logits are the same.
        rows = positions
        if objective == "mlm_nsp":
          rows = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
        encoder_outputs = encoder.outputs_at(inputs, rows)  # sequence_output (batch, [1 +] P, H)
        masked = encoder_outputs["sequence_output"]
        if objective == "mlm_nsp":
          masked = masked[:, 1:]
      else:
        encoder_outputs = encoder(inputs)
        masked = GatherPositions(name="gather_masked")(encoder_outputs["sequence_output"],
                                                       positions)
      outputs["mlm_logits"] = mlm_head(masked)
    if objective == "mlm_nsp":
      outputs["nsp_logits"] = nsp_head(encoder_outputs["pooled_output"])
    # Logits in float32 for a stable softmax under mixed precision.
    outputs = {k: keras.layers.Activation("linear", dtype="float32", name=k)(v)
               for k, v in outputs.items()}
    # Read by `layers` while the functional model is set up, before attributes can be tracked.
    object.__setattr__(self, "_nested_encoder", encoder)
    super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    # === Config ===
    self.encoder = encoder
    self.objective = objective
    self.last_block_all_positions = last_block_all_positions
    self.mlm_head = mlm_head
    self.nsp_head = nsp_head if objective == "mlm_nsp" else None

  @property
  def layers(self):
    """The graph's layers with the encoder as one nested layer, wherever its own layers were wired
    again (`BertEncoder.outputs_at`): the input layers, the encoder, then the heads.

    As when the graph called the encoder whole, so its weights keep one order and one place:
    the model's variable list (which the optimizer's slots follow by index, in checkpoints) and
    the layout of .keras / .weights.h5 files (`layers/bert_encoder/...`, which the checkpoint
    loader recognises and files saved before the change use) are the same either way.
    """
    layers = super().layers
    encoder = self.__dict__.get("_nested_encoder")
    if encoder is None or any(layer is encoder for layer in layers):
      return layers
    inputs = [layer for layer in layers if isinstance(layer, keras.layers.InputLayer)]
    owned = {id(layer) for layer in encoder.layers}
    return inputs + [encoder] + [layer for layer in layers
                                 if id(layer) not in owned and layer not in inputs]

  def get_config(self):
    config = {"name": self.name, "trainable": self.trainable, "objective": self.objective,
              "encoder": keras.saving.serialize_keras_object(self.encoder)}
    if self.last_block_all_positions:  # absent by default: configs saved before it still match
      config["last_block_all_positions"] = True
    return config

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
    return cls(**config)
