"""Faster implementations of the reference model's layers, and the one place that chooses them:
"reference" is the model itself, "cpu" a Keras model over the same variables whose blocks and
masked-LM head run the CPU kernels (measured on CPU only: the default without GPU or TPU).
"""

from __future__ import annotations

import keras
import tensorflow as tf

IMPLEMENTATIONS = ("reference", "cpu")


def default_implementation() -> str:
  accelerators = tf.config.list_logical_devices("GPU") + tf.config.list_logical_devices("TPU")
  return "reference" if accelerators else "cpu"


def implementation_of(model: keras.Model, implementation: str | None = None, *,
                      head_groups: int = 1, fused_elementwise: bool = True) -> keras.Model:
  """`model` run by `implementation` (None: the default); fused_elementwise: the training step's
  fused GELUs and wide dense."""
  implementation = implementation or default_implementation()
  if implementation not in IMPLEMENTATIONS:
    raise ValueError(f"implementation={implementation!r}; expected one of {IMPLEMENTATIONS}")
  if implementation == "reference":
    return model
  # Imported here: the models import nothing from this package, this package imports them.
  from bert_keras.kernels.cpu_masked_lm_head import CpuMaskedLMHead
  from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
  from bert_keras.kernels.last_block_rows import pooled_head_at_cls, pretrainer_at_rows
  from bert_keras.models.bert_pretrainer import BertPretrainer
  from bert_keras.models.masked_lm_head import MaskedLMHead
  from bert_keras.models.transformer_block import TransformerBlock
  from bert_keras.models.heads.bert_classifier import BertClassifier
  from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice

  def call_the_cpu_way(layer, *args, **kwargs):
    if isinstance(layer, TransformerBlock):
      # Rows at query positions run unsplit: no kernel copies for a path that would not read them.
      at_rows = len(args) > 2 or kwargs.get("query_positions") is not None
      return CpuTransformerBlock(layer, 1 if at_rows else head_groups,
                                 fused_elementwise)(*args, **kwargs)
    if isinstance(layer, MaskedLMHead):
      return CpuMaskedLMHead(layer, fused_elementwise)(*args, **kwargs)
    return layer(*args, **kwargs)

  if isinstance(model, BertPretrainer) and model.objective != "ltr":
    return pretrainer_at_rows(model, call_the_cpu_way)
  if isinstance(model, (BertClassifier, BertMultipleChoice)):
    return pooled_head_at_cls(model, call_the_cpu_way)
  # The same graph over the same layers, nested models included, called through call_the_cpu_way.
  return keras.models.clone_model(model, clone_function=lambda layer: layer,
                                  call_function=call_the_cpu_way, recursive=True)


def hidden_size(model: keras.Model) -> int | None:
  """The widest Transformer block's hidden size in `model` (nested models included), or None."""
  from bert_keras.models.transformer_block import TransformerBlock
  widths, stack = [], [model]
  while stack:
    layer = stack.pop()
    if isinstance(layer, TransformerBlock) and layer.built:
      widths.append(layer.num_heads * layer.head_dim)
    stack.extend(getattr(layer, "layers", ()))
  return max(widths) if widths else None
