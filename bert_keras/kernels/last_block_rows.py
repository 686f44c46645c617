"""Graphs whose last Transformer block computes only the rows the model's heads read.

Pretraining: the masked-LM and next-sentence heads read [CLS] and the masked positions only (21
rows of 128 at the paper's settings), so the last block needs only those rows as queries (its keys
and values still come from every position): the same logits and gradients, 13% of the FLOPs off a
BERT-mini step and 5.6% at Base (CpuTransformerBlock's `query_positions`). The "ltr" objective
reads every position and keeps the plain graph (the fallback).

Classification and multiple choice: the head reads the pooled [CLS] row alone, so the last block
computes one query row per sequence (keys and values still at every position): 14% of the
encoder's FLOPs for MiniLM's 6 blocks at any length. In the exported text-in models (the CPU
implementation), MiniLM's shapes at threads 1/2, model only, same-process A/B: batch 1 at 24-48
positions 2-4% less time, at 128 8%; batch 32 at 32 and 64 positions 11-12%. Served against
torch: bench/bench_serving_real.py --head=classifier.
Heads that read every position (spans, tags, features) keep the plain graph.

Equality of outputs and gradients: tests/kernels/test_last_block_rows.py. Each graph is built from
the model's own layers (no copies), as a separate Keras model that the Trainer or the exporter
calls; the model they save and checkpoint is untouched.
"""

import keras
from keras import ops


def pretrainer_at_rows(pretrainer, call_function) -> keras.Model:
  """A model with the pretrainer's inputs, outputs and variables whose last block computes only
  the rows the heads read. `call_function(layer, *args, **kwargs)` calls every other layer (the
  CPU implementation's substitutions); `query_block(block)` wraps the last block."""
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
  """A model with the head's inputs, outputs and variables whose encoder's last block computes
  only the [CLS] row, the one row the pooler reads; for heads that read nothing but the encoder's
  `pooled_output` (BertClassifier, BertMultipleChoice). `call_function` as in
  `pretrainer_at_rows`."""
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
