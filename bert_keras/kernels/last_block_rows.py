"""Graphs whose last Transformer block computes only the rows the heads read (keys and values from
every position: the same logits). Pretraining ([CLS] and masked rows): 13% of a BERT-mini step's
FLOPs off, 5.6% at Base. Classifiers ([CLS]): exported, batch 1 2-8% less time, batch 32 11-12%.
"""

import keras
from keras import ops


def pretrainer_at_rows(pretrainer, call_function) -> keras.Model:
  """The pretrainer's graph, its last block on the rows the heads read; `call_function(layer, ...)`
  calls every layer."""
  encoder = pretrainer.encoder
  last = encoder.blocks[-1]
  inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
            for name in pretrainer.input}
  before_last = {}

  def up_to_the_last_block(layer, *args, **kwargs):
    if layer is last:  # its input and attention mask, on the pretrainer's own inputs
      before_last["x"], before_last["mask"] = args[0], args[1]
      return args[0]
    return call_function(layer, *args, **kwargs)

  # Runs the encoder's graph on these inputs (the returned model, whose outputs skip the last
  # block, is not used: only the two tensors recorded on the way).
  keras.models.clone_model(encoder, input_tensors={name: inputs[name] for name in encoder.input},
                           clone_function=lambda layer: layer, call_function=up_to_the_last_block)
  positions = inputs["masked_lm_positions"]
  with_cls = pretrainer.objective == "mlm_nsp"
  if with_cls:  # [CLS] first, for the NSP head
    positions = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
  rows = call_function(last, before_last["x"], before_last["mask"], positions)  # (batch, [1 +] P, H)
  outputs = {"mlm_logits": call_function(pretrainer.mlm_head, rows[:, 1:] if with_cls else rows)}
  if with_cls:
    outputs["nsp_logits"] = pretrainer.nsp_head(encoder.pooler(rows))
  outputs = {name: pretrainer.get_layer(name)(value) for name, value in outputs.items()}
  return keras.Model(inputs, outputs, name=pretrainer.name)


def pooled_head_at_cls(head, call_function) -> keras.Model:
  """The head's graph, its encoder's last block on the [CLS] row only, for heads that read only
  `pooled_output` (BertClassifier, BertMultipleChoice)."""
  encoder = head.encoder
  last = encoder.blocks[-1]

  def last_block_at_cls(layer, *args, **kwargs):
    if layer is last:  # (batch, 1, H): the sequence output is the [CLS] row alone
      x, mask = args[0], args[1]
      cls = ops.zeros_like(mask[:, :1, 0])  # (batch, 1): position 0 of every sequence
      return call_function(last, x, mask, cls)
    return call_function(layer, *args, **kwargs)

  encoder_at_cls = keras.models.clone_model(encoder, clone_function=lambda layer: layer,
                                            call_function=last_block_at_cls)
  return keras.models.clone_model(
      head, clone_function=lambda layer: layer,
      call_function=lambda layer, *args, **kwargs: (
          encoder_at_cls(*args, **kwargs) if layer is encoder
          else call_function(layer, *args, **kwargs)))
