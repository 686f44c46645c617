"""Hugging Face BERT checkpoints: `config.json` + `model.safetensors`, renamed into Google names.

Read with `safetensors.numpy` only, never a pickle (`pytorch_model.bin` is refused). torch
`Linear.weight` is (out, in), the transpose of a TF kernel, except `cls.seq_relationship.weight`,
already Google's (2, H). HF "gelu" is the exact erf GELU (our `gelu`); `gelu_new` the tanh form.
"""

from __future__ import annotations

import os
import re

import numpy as np

from bert_keras import safety
from bert_keras.errors import UserError
from bert_keras.interop.google_checkpoint import GOOGLE_CONFIG_KEYS, config_from_keys
from bert_keras.interop.weight_map import NamedWeights
from bert_keras.json_io import read_json_file
from bert_keras.configs.model import ModelConfig

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
SHARD_INDEX_NAME = "model.safetensors.index.json"
_ACT_FROM_HF = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
                "gelu_fast": "gelu_tanh", "relu": "relu"}

# (regex over the name without the `bert.` prefix, Google name template, transpose?)
_RULES = [
    (r"embeddings\.word_embeddings\.weight", "bert/embeddings/word_embeddings", False),
    (r"embeddings\.position_embeddings\.weight", "bert/embeddings/position_embeddings", False),
    (r"embeddings\.token_type_embeddings\.weight", "bert/embeddings/token_type_embeddings", False),
    (r"embeddings\.LayerNorm\.(weight|gamma)", "bert/embeddings/LayerNorm/gamma", False),
    (r"embeddings\.LayerNorm\.(bias|beta)", "bert/embeddings/LayerNorm/beta", False),
    (r"encoder\.layer\.(\d+)\.attention\.self\.(query|key|value)\.weight",
     "bert/encoder/layer_{0}/attention/self/{1}/kernel", True),
    (r"encoder\.layer\.(\d+)\.attention\.self\.(query|key|value)\.bias",
     "bert/encoder/layer_{0}/attention/self/{1}/bias", False),
    (r"encoder\.layer\.(\d+)\.(attention\.output|intermediate|output)\.dense\.weight",
     "bert/encoder/layer_{0}/{1}/dense/kernel", True),
    (r"encoder\.layer\.(\d+)\.(attention\.output|intermediate|output)\.dense\.bias",
     "bert/encoder/layer_{0}/{1}/dense/bias", False),
    (r"encoder\.layer\.(\d+)\.(attention\.output|output)\.LayerNorm\.(weight|gamma)",
     "bert/encoder/layer_{0}/{1}/LayerNorm/gamma", False),
    (r"encoder\.layer\.(\d+)\.(attention\.output|output)\.LayerNorm\.(bias|beta)",
     "bert/encoder/layer_{0}/{1}/LayerNorm/beta", False),
    (r"pooler\.dense\.weight", "bert/pooler/dense/kernel", True),
    (r"pooler\.dense\.bias", "bert/pooler/dense/bias", False),
    (r"cls\.predictions\.transform\.dense\.weight", "cls/predictions/transform/dense/kernel", True),
    (r"cls\.predictions\.transform\.dense\.bias", "cls/predictions/transform/dense/bias", False),
    (r"cls\.predictions\.transform\.LayerNorm\.(weight|gamma)",
     "cls/predictions/transform/LayerNorm/gamma", False),
    (r"cls\.predictions\.transform\.LayerNorm\.(bias|beta)",
     "cls/predictions/transform/LayerNorm/beta", False),
    (r"cls\.predictions\.bias", "cls/predictions/output_bias", False),
    (r"cls\.seq_relationship\.weight", "cls/seq_relationship/output_weights", False),
    (r"cls\.seq_relationship\.bias", "cls/seq_relationship/output_bias", False),
]
_COMPILED = [(re.compile(pattern + r"$"), template, transpose)
             for pattern, template, transpose in _RULES]
# Tensors that carry no information of their own: buffers and the tied decoder (checked below).
_DERIVED = re.compile(r"(embeddings\.position_ids|cls\.predictions\.decoder\.(weight|bias))$")


def google_name(hf_name: str):
  """(Google name, transpose?) for a HF tensor name, or None when it maps to nothing."""
  name = hf_name[len("bert."):] if hf_name.startswith("bert.") else hf_name
  for pattern, template, transpose in _COMPILED:
    match = pattern.match(name)
    if match:
      groups = [g for g in match.groups() if g not in ("weight", "bias", "gamma", "beta")]
      return template.format(*groups).replace("attention.output", "attention/output"), transpose
  return None


# HF BertConfig uses bert_config.json's keys, a type_vocab_size default of 2, and has layer_norm_eps.
_HF_CONFIG_KEYS = {**GOOGLE_CONFIG_KEYS, "type_vocab_size": ("type_vocab_size", 2),
                   "layer_norm_epsilon": ("layer_norm_eps", 1e-12)}


def config_from_hf(values: dict, path: str) -> ModelConfig:
  """Maps a HF BertConfig config.json to ModelConfig; refuses non-BERT layouts with a reason."""
  model_type = values.get("model_type", "bert")
  if model_type != "bert":
    raise UserError(f"{path}: model_type={model_type!r}; only 'bert' checkpoints are supported "
                    "(other types differ in embeddings or attention)")
  position_type = values.get("position_embedding_type", "absolute")
  if position_type != "absolute":
    raise UserError(f"{path}: position_embedding_type={position_type!r}; only 'absolute' is "
                    "supported")
  return config_from_keys(values, path, _HF_CONFIG_KEYS, _ACT_FROM_HF)


def read_config(directory: str) -> ModelConfig:
  path = os.path.join(directory, CONFIG_NAME)
  return config_from_hf(read_json_file(path, "config file", expected=dict), path)


def _load_file(path: str) -> dict:
  from safetensors import SafetensorError
  from safetensors.numpy import load_file

  if not os.path.exists(path):
    raise UserError(f"{path}: no such safetensors file")
  try:
    return load_file(path)
  except (SafetensorError, OSError, ValueError) as e:
    raise UserError(f"{path}: cannot read safetensors (truncated or corrupt?): {e}") from e


def weights_files(directory: str) -> list:
  """`model.safetensors`, or the shards a `model.safetensors.index.json` lists."""
  index = os.path.join(directory, SHARD_INDEX_NAME)
  if os.path.exists(index):
    weight_map = read_json_file(index, "safetensors index file", expected=dict).get("weight_map")
    if not isinstance(weight_map, dict):
      raise UserError(f"{index}: expected a 'weight_map' object")
    shards = set()
    for tensor, shard in weight_map.items():
      if not isinstance(shard, str):
        raise UserError(f"{index}: weight_map[{tensor!r}]={shard!r}; expected a shard file name "
                        "(a string)")
      # A shard outside the checkpoint directory ("../x", "/abs/x") is refused, never read.
      shards.add(safety.safe_join(directory, shard, f"{index}: weight_map[{tensor!r}]"))
    if not shards:
      raise UserError(f"{index}: 'weight_map' is empty; expected tensor name -> shard file")
    return sorted(shards)
  path = os.path.join(directory, WEIGHTS_NAME)
  if not os.path.exists(path):
    if os.path.exists(os.path.join(directory, "pytorch_model.bin")):
      raise UserError(f"{path}: missing; only pytorch_model.bin (a pickle) is present, which is "
                      "never loaded here. Convert it to safetensors first")
    raise UserError(f"{path}: no such safetensors file")
  return [path]


def read_weights(paths) -> NamedWeights:
  """HF tensors renamed to Google names and transposed to TF layout."""
  arrays, unused, shapes = {}, [], {}
  sources = {}
  for path in paths:
    for name, array in _load_file(path).items():
      sources[name] = (path, array)
  for name, (path, array) in sources.items():
    mapped = google_name(name)
    if mapped is None:
      if not _DERIVED.search(name):
        unused.append(name)
      continue
    target, transpose = mapped
    if target in arrays:
      raise UserError(f"{path}: tensors {name} and another one both map to {target}")
    if transpose and array.ndim != 2:
      raise UserError(f"{path}: tensor {name} has shape {array.shape}; expected a 2-D weight")
    arrays[target] = array.T if transpose else array
    shapes[target] = tuple(arrays[target].shape)
  decoder = next((n for n in sources if n.endswith("cls.predictions.decoder.weight")), None)
  words = arrays.get("bert/embeddings/word_embeddings")
  if decoder is not None and words is not None:
    path, table = sources[decoder]
    if table.shape != words.shape or not np.allclose(table, words):
      raise UserError(f"{path}: {decoder} differs from the word embeddings; untied MLM output "
                      "projections are not supported (BERT ties them)")
  label = paths[0] if len(paths) == 1 else os.path.dirname(paths[0])
  return NamedWeights(path=label, shapes=shapes, read=lambda n: arrays[n], unused=sorted(unused))


def lower_case(directory: str):
  """`do_lower_case` from tokenizer_config.json, or None when the file does not say."""
  path = os.path.join(directory, "tokenizer_config.json")
  if not os.path.exists(path):
    return None
  value = read_json_file(path, "tokenizer config file", expected=dict).get("do_lower_case")
  return value if isinstance(value, bool) else None
