"""Faster implementations of the reference model's layers, and the one place that chooses them.

The models in bert_keras/models/ are the reference: Keras layers and keras.ops, the form every
device runs. This package holds implementations of the same contracts measured faster on CPU, each
in its own small file with the measurement in its docstring, its fallback and an equality test in
tests/kernels/: hashed dropout (bit_dropout), the wide dense with a transposed kernel copy
(wide_dense), the fused and the hand-gradient LayerNorm (fused_layer_norm, layer_norm_grad), the
fused GELUs (fused_gelu), einsum permutes (einsum_permute), head groups and query rows
(cpu_transformer_block), the last block on the rows the heads read (last_block_rows). The
constants tuned on one host live in host_tuning.py.

The seam: `implementation_of(model, name)` returns what runs. "reference" is the model itself;
"cpu" is a Keras model with the same inputs, outputs and variables (the model's own: nothing is
copied, so what the Trainer trains is what it saves; inference-only head groups add copies of
kernel columns, for exports) whose Transformer blocks and masked-LM head are called through the
CPU kernels. The Trainer and the exporter take the name as an argument
(`implementation`); None means `default_implementation()`: "cpu" on a host without GPU or TPU,
else "reference", since the tricks were measured on CPU only. Nothing is process-global and the
given model is never changed; saved files name only the reference classes.
"""

from __future__ import annotations

import keras
import tensorflow as tf

IMPLEMENTATIONS = ("reference", "cpu")


def default_implementation() -> str:
  """"reference" when a GPU or TPU is visible, else "cpu"."""
  accelerators = tf.config.list_logical_devices("GPU") + tf.config.list_logical_devices("TPU")
  return "reference" if accelerators else "cpu"


def implementation_of(model: keras.Model, implementation: str | None = None, *,
                      head_groups: int = 1, fused_elementwise: bool = True) -> keras.Model:
  """`model` run by `implementation` (see the module docstring); None = the default.

  head_groups: the groups of heads (and shares of the feed-forward width) each block
  runs side by side at inference; the blocks hold copies of the kernel columns each group reads,
  so the returned model has those weights besides the model's (cpu_transformer_block.py).
  fused_elementwise: the CPU training step's fused GELUs and transposed-copy widening projection.
  """
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
      # Rows at query positions (the last block under a head that reads a few rows) run
      # unsplit: no copies of kernel columns for a path that would not read them.
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
  # The same graph over the same layers (clone_function keeps each layer), nested models included,
  # with each layer called through `call_the_cpu_way`.
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
