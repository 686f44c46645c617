"""GPT-1 fine-tuning model: one linear head on the extract token's state (section 3.2, 3.3)."""

from __future__ import annotations

import keras
from keras import ops

from bert_keras.models.backbone import BackboneTaskModel, FlattenSequences
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLMHead

TASK_TYPES = ("classification", "similarity", "multiple_choice")


@keras.saving.register_keras_serializable(package="bert_keras")
class RegroupSequences(keras.layers.Layer):
  """(batch * k, ...) back to (batch, k, ...), the shape read from a reference (batch, k, seq)."""

  def call(self, x, reference):
    batch, k = ops.shape(reference)[0], ops.shape(reference)[1]
    return ops.reshape(x, (batch, k) + tuple(ops.shape(x)[1:]))


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTExtractPooler(keras.layers.Layer):
  """(N, seq, H) states and the right-padded mask -> (N, H), the state at the extract token (the
  last real one): h_l^m, the only position of a causal model that has seen the whole input."""

  def call(self, sequence, input_mask):
    last = ops.maximum(ops.sum(ops.cast(input_mask, "int32"), axis=1) - 1, 0)  # (N,)
    return ops.take_along_axis(sequence, ops.reshape(last, (-1, 1, 1)), axis=1)[:, 0, :]  # (N, H)


@keras.saving.register_keras_serializable(package="bert_keras")
class AddOrders(keras.layers.Layer):
  """(batch, 2, H) -> (batch, H): the similarity pair's two orderings, added element-wise."""

  def call(self, states):
    return ops.sum(states, axis=1)


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTTaskModel(BackboneTaskModel):
  """The pretrained decoder plus W_y, for the input layouts of Figure 1 (right): "classification"
  (and entailment), (batch, seq); "similarity", (batch, 2, seq), the pair in both orders, extract
  states added (no inherent ordering); "multiple_choice", (batch, choices, seq), a shared W_y scoring
  each answer. `with_lm_logits`: also the tied LM head's `lm_logits` for L3 = L2 + lambda * L1.
  """

  BACKBONE = "decoder"

  def __init__(self, decoder: GPTDecoder, task_type: str = "classification", num_outputs: int = 2,
               classifier_dropout: float = 0.1, with_lm_logits: bool = True, **kwargs):
    if task_type not in TASK_TYPES:
      raise ValueError(f"task_type={task_type!r}; expected one of {TASK_TYPES}")
    if task_type == "multiple_choice":
      num_outputs = 1  # one score per answer
    if not isinstance(num_outputs, int) or num_outputs < 1:
      raise ValueError(f"num_outputs={num_outputs!r} must be a positive integer")
    init = keras.initializers.TruncatedNormal(stddev=decoder.initializer_range)

    pooler = GPTExtractPooler(name="extract_pooler")
    dropout = keras.layers.Dropout(classifier_dropout, name="classifier_dropout")
    classifier = keras.layers.Dense(num_outputs, kernel_initializer=init, name="classifier",
                                    dtype=decoder.dtype_policy)
    lm_head = GPTLMHead(decoder.token_embedding, name="lm_head", dtype=decoder.dtype_policy)

    grouped = task_type != "classification"
    shape = ((2, None) if task_type == "similarity" else (None, None)) if grouped else (None,)
    word_ids = keras.Input(shape=shape, dtype="int32", name="input_word_ids")
    mask = keras.Input(shape=shape, dtype="int32", name="input_mask")
    flat_ids, flat_mask = word_ids, mask
    if grouped:
      flat_ids = FlattenSequences(name="flatten_ids")(word_ids)
      flat_mask = FlattenSequences(name="flatten_mask")(mask)
    sequence = decoder({"input_word_ids": flat_ids, "input_mask": flat_mask})["sequence_output"]
    state = pooler(sequence, flat_mask)  # (N, H)
    if grouped:
      state = RegroupSequences(name="regroup_states")(state, word_ids)  # (batch, k, H)
    if task_type == "similarity":
      state = AddOrders(name="add_orders")(state)  # (batch, H)
    logits = classifier(dropout(state))
    if task_type == "multiple_choice":
      logits = keras.layers.Reshape((-1,), name="choice_logits")(logits)  # (batch, choices)
    outputs = {"logits": keras.layers.Activation("linear", dtype="float32", name="logits")(logits)}
    if with_lm_logits:
      lm_logits = lm_head(sequence)  # (N, seq, vocab)
      if grouped:
        lm_logits = RegroupSequences(name="regroup_lm_logits")(lm_logits, word_ids)
      outputs["lm_logits"] = keras.layers.Activation(
          "linear", dtype="float32", name="lm_logits")(lm_logits)
    super().__init__(inputs={"input_word_ids": word_ids, "input_mask": mask}, outputs=outputs,
                     **kwargs)
    self.set_task_config(decoder, task_type=task_type, num_outputs=num_outputs,
                         classifier_dropout=classifier_dropout, with_lm_logits=with_lm_logits)
    self.classifier = classifier
