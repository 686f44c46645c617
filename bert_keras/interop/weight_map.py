"""The one mapping between our Keras variables and the original Google BERT checkpoint names
(google-research/bert modeling.py), the interchange vocabulary of this package: the Hugging Face
reader renames into them, the Google writer writes them. Two layouts differ from a plain copy: our
fused (H, 3H) `qkv` kernel holds the checkpoint's query, key and value as q|k|v column thirds, and
`cls/seq_relationship/output_weights` is stored (2, H), the transpose of a Dense kernel.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable, Optional

import numpy as np

from bert_keras.errors import UserError

# Variables that released checkpoints carry but a model never needs, skipped on purpose: optimizer
# slots and step counters.
_TRAINING_STATE_SUFFIXES = ("/adam_m", "/adam_v", "/Adam", "/Adam_1", "/lamb_m", "/lamb_v",
                            "/Momentum")
_TRAINING_STATE_NAMES = ("global_step", "_CHECKPOINTABLE_OBJECT_GRAPH", "beta1_power",
                         "beta2_power")


@dataclasses.dataclass
class NamedWeights:
  """Checkpoint tensors under Google names and layout, read lazily (BERT-Large is 1.3 GB); `path`
  is the file error messages name."""
  path: str
  shapes: dict
  read: Callable[[str], np.ndarray]
  unused: list = dataclasses.field(default_factory=list)  # source names that map to nothing


@dataclasses.dataclass(frozen=True)
class Slot:
  """One checkpoint tensor in a Keras variable: `columns` of its last axis (the fused qkv), or its
  transpose."""
  name: str
  variable: object  # keras.Variable
  columns: Optional[slice] = None
  transpose: bool = False
  optional: bool = False  # missing from a checkpoint -> keep the fresh initialisation, warn.

  @property
  def checkpoint_shape(self) -> tuple:
    shape = tuple(int(d) for d in self.variable.shape)
    if self.columns is not None:
      shape = shape[:-1] + (self.columns.stop - self.columns.start,)
    return shape[::-1] if self.transpose else shape


_NORM = ("gamma", "beta")  # a LayerNorm's variables; a Dense's: kernel, bias


def _slots(prefix: str, layer, names=("kernel", "bias"), optional: bool = False) -> list:
  return [Slot(f"{prefix}/{name}", getattr(layer, name), optional=optional) for name in names]


def encoder_slots(encoder) -> list:
  """Every encoder variable under its Google name (the pooler is optional: some exports drop it)."""
  slots = [
      Slot("bert/embeddings/word_embeddings", encoder.token_embedding.embeddings),
      Slot("bert/embeddings/token_type_embeddings",
           encoder.get_layer("type_embedding").embeddings),
      Slot("bert/embeddings/position_embeddings",
           encoder.get_layer("position_embedding").embeddings),
  ]
  slots += _slots("bert/embeddings/LayerNorm", encoder.get_layer("embeddings_layer_norm"), _NORM)
  hidden = encoder.hidden_size
  for i, block in enumerate(encoder.blocks):
    prefix = f"bert/encoder/layer_{i}"
    for j, part in enumerate(("query", "key", "value")):  # q|k|v thirds of the fused projection.
      columns = slice(j * hidden, (j + 1) * hidden)
      slots += [Slot(f"{prefix}/attention/self/{part}/{name}", getattr(block.qkv_dense, name),
                     columns) for name in ("kernel", "bias")]
    slots += _slots(f"{prefix}/attention/output/dense", block.attention_output_dense)
    slots += _slots(f"{prefix}/attention/output/LayerNorm", block.attention_layer_norm, _NORM)
    slots += _slots(f"{prefix}/intermediate/dense", block.intermediate_dense)
    slots += _slots(f"{prefix}/output/dense", block.output_dense)
    slots += _slots(f"{prefix}/output/LayerNorm", block.output_layer_norm, _NORM)
  slots += _slots("bert/pooler/dense", encoder.get_layer("pooler").dense, optional=True)
  return slots


def pretrainer_slots(pretrainer, optional_heads: bool = True) -> list:
  """Encoder slots plus the heads (the MLM projection is tied to word_embeddings: only its bias)."""
  head = pretrainer.mlm_head
  slots = encoder_slots(pretrainer.encoder)
  slots += _slots("cls/predictions/transform/dense", head.transform, optional=optional_heads)
  slots += _slots("cls/predictions/transform/LayerNorm", head.layer_norm, _NORM, optional_heads)
  slots.append(Slot("cls/predictions/output_bias", head.output_bias, optional=optional_heads))
  if pretrainer.nsp_head is not None:
    slots.append(Slot("cls/seq_relationship/output_weights", pretrainer.nsp_head.kernel,
                      transpose=True, optional=optional_heads))
    slots.append(Slot("cls/seq_relationship/output_bias", pretrainer.nsp_head.bias,
                      optional=optional_heads))
  return slots


def assign(slots: Iterable[Slot], weights: NamedWeights, model_desc: str = "") -> dict:
  """Copies checkpoint tensors into the slots' variables; {"loaded", "missing"}. Every name and
  shape is checked before any variable changes: a failed load leaves no half-converted model."""
  slots = list(slots)
  missing_required = [s.name for s in slots if s.name not in weights.shapes and not s.optional]
  if missing_required:
    shown = ", ".join(missing_required[:5])
    more = f" and {len(missing_required) - 5} more" if len(missing_required) > 5 else ""
    raise UserError(f"{weights.path}: checkpoint lacks variable(s) {shown}{more} "
                    f"needed by the model ({model_desc})")
  present = [s for s in slots if s.name in weights.shapes]
  for slot in present:
    shape = tuple(int(d) for d in weights.shapes[slot.name])
    if shape != slot.checkpoint_shape:
      message = (f"{weights.path}: variable {slot.name} has shape {shape} in the checkpoint but "
                 f"shape {slot.checkpoint_shape} in the model ({model_desc})")
      if slot.name == "bert/embeddings/word_embeddings" and shape[0] != slot.checkpoint_shape[0]:
        message += (f"; the checkpoint's vocabulary has {shape[0]} entries, the model's vocab_size "
                    f"is {slot.checkpoint_shape[0]}")
      raise UserError(message)

  # Fused variables receive several slices: assemble each variable's full value, then assign once.
  values = {}
  for slot in present:
    array = np.asarray(weights.read(slot.name))
    if slot.transpose:
      array = array.T
    key = id(slot.variable)
    if slot.columns is None:
      values[key] = (slot.variable, array)
    else:
      variable, full = values.get(key, (slot.variable, np.array(slot.variable.numpy())))
      full[..., slot.columns] = array
      values[key] = (variable, full)
  for variable, value in values.values():
    variable.assign(value.astype(variable.dtype))
  return {"loaded": [s.name for s in present],
          "missing": [s.name for s in slots if s.name not in weights.shapes]}


def collect(slots: Iterable[Slot]) -> dict:
  """The reverse of `assign`: {Google name: numpy array in checkpoint layout}."""
  out = {}
  for slot in slots:
    value = np.asarray(slot.variable.numpy())
    if slot.columns is not None:
      value = value[..., slot.columns]
    out[slot.name] = np.ascontiguousarray(value.T if slot.transpose else value)
  return out


def unexpected_names(slots: Iterable[Slot], weights: NamedWeights, prefixes=("bert/",)) -> list:
  """Checkpoint names under `prefixes` that no slot takes (e.g. layer_12 for a 12-layer config)."""
  taken = {s.name for s in slots}
  return sorted(n for n in weights.shapes if n.startswith(prefixes) and n not in taken
                and n not in _TRAINING_STATE_NAMES and not n.endswith(_TRAINING_STATE_SUFFIXES))
