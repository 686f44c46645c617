"""The original Google BERT release format: `bert_config.json` + a TF1 name-based checkpoint.

Read with `tf.train.load_checkpoint`; written with the name-based `SaveV2` op, the files
`tf.compat.v1.train.Saver` writes. google-research/bert's `gelu` is the tanh approximation
(modeling.py): a Google "gelu" imports as our `gelu_tanh`; both our GELUs export as "gelu".
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

import numpy as np
from absl import logging

from bert_keras import safety
from bert_keras.atomic_io import write_json
from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file
from bert_keras.interop.weight_map import NamedWeights
from bert_keras.configs.model import ConfigError, ModelConfig

CONFIG_NAME = "bert_config.json"
CHECKPOINT_NAME = "bert_model.ckpt"
_ACT_FROM_GOOGLE = {"gelu": "gelu_tanh", "relu": "relu"}
_ACT_TO_GOOGLE = {"gelu": "gelu", "gelu_tanh": "gelu", "relu": "relu"}


REQUIRED = object()  # a config_from_keys default: the key must be present

# ModelConfig field -> (bert_config.json key, default when absent); shared with hf_checkpoint.
GOOGLE_CONFIG_KEYS = {
    "vocab_size": ("vocab_size", REQUIRED), "hidden_size": ("hidden_size", REQUIRED),
    "num_layers": ("num_hidden_layers", REQUIRED), "num_heads": ("num_attention_heads", REQUIRED),
    "intermediate_size": ("intermediate_size", REQUIRED), "hidden_act": ("hidden_act", "gelu"),
    "dropout_rate": ("hidden_dropout_prob", 0.1),
    "attention_dropout_rate": ("attention_probs_dropout_prob", 0.1),
    "max_position_embeddings": ("max_position_embeddings", 512),
    "type_vocab_size": ("type_vocab_size", 16), "initializer_range": ("initializer_range", 0.02)}
REQUIRED_CONFIG_KEYS = tuple(key for key, default in GOOGLE_CONFIG_KEYS.values() if default is REQUIRED)


def config_from_keys(values: dict, path: str, keys: dict, activations: dict,
                     missing_hint: str = "") -> ModelConfig:
  """A ModelConfig from a config JSON by table (`keys`: field -> (the format's key, default or
  REQUIRED); `activations`: its hidden_act -> ours); errors name the file and the format's key."""
  missing = [key for key, default in keys.values() if default is REQUIRED and key not in values]
  if missing:
    raise UserError(f"{path}: missing key(s) {missing}{missing_hint}")
  fields = {field: values.get(key, default) for field, (key, default) in keys.items()}
  act = fields["hidden_act"]
  if not isinstance(act, str) or act not in activations:
    raise UserError(f"{path}: hidden_act={act!r} is not supported; expected one of "
                    f"{sorted(activations)}")
  fields["hidden_act"] = activations[act]
  try:
    return ModelConfig(**fields)
  except ConfigError as e:  # reported under the file's own key when it holds one
    source = keys[e.key][0] if e.key in keys else None
    if source is not None and source in values:
      raise UserError(f"{path}: key {source!r}: {e}") from None
    raise UserError(f"{path}: {e}") from None


def config_from_google(values: dict, path: str) -> ModelConfig:
  """Maps bert_config.json keys to a ModelConfig; UserError names the file and the bad key/value."""
  return config_from_keys(values, path, GOOGLE_CONFIG_KEYS, _ACT_FROM_GOOGLE,
                          f"; a bert_config.json needs {list(REQUIRED_CONFIG_KEYS)}")


def config_to_google(config: ModelConfig) -> tuple[dict, list]:
  """The bert_config.json for a ModelConfig, and warnings for what the format cannot express."""
  if config.attention != "bidirectional":
    raise UserError(f"attention={config.attention!r} cannot be written as a Google BERT checkpoint: "
                    "bert_config.json describes bidirectional encoders only")
  warnings = []
  if config.hidden_act == "gelu":
    warnings.append("hidden_act='gelu' (exact erf) is written as Google 'gelu', which the original "
                    "code computes with the tanh approximation (max difference ~1e-3)")
  if config.layer_norm_epsilon != 1e-12:
    warnings.append(f"layer_norm_epsilon={config.layer_norm_epsilon} is not expressible in "
                    "bert_config.json (the original code fixes 1e-12)")
  values = {key: getattr(config, field) for field, (key, _) in GOOGLE_CONFIG_KEYS.items()}
  values["hidden_act"] = _ACT_TO_GOOGLE[config.hidden_act]
  return values, warnings


def read_config(path: str) -> ModelConfig:
  return config_from_google(read_json_file(path, "config file", expected=dict), path)


def _state_file_prefix(directory: str):
  """The prefix the `checkpoint` state file names, if inside `directory`, else None: TF1's Saver
  writes absolute paths, so a moved release would silently load another directory's weights."""
  path = os.path.join(directory, "checkpoint")
  if not os.path.isfile(path):
    return None
  try:
    with open(path, encoding="utf-8") as f:
      match = re.search(r'^model_checkpoint_path:\s*"([^"]*)"', f.read(), re.MULTILINE)
  except (OSError, UnicodeDecodeError):
    return None
  if not match:
    return None
  named = match.group(1)
  candidates = [] if os.path.isabs(named) else [named]
  base = os.path.basename(named.rstrip("/"))
  if base not in ("", ".", ".."):
    candidates.append(base)
  for relative in candidates:
    try:
      prefix = safety.safe_join(directory, relative, "checkpoint state file entry")
      safety.safe_join(directory, relative + ".index", "checkpoint state file entry")
    except UserError:
      continue
    if os.path.isfile(prefix + ".index"):
      if relative != named:
        logging.warning("%s names %s, outside this directory; reading %s instead", path, named,
                        prefix)
      return prefix
  logging.warning("%s names %s, which is not a checkpoint inside %s; ignored", path, named,
                  directory)
  return None


def find_prefix(directory: str) -> str:
  """The state file's prefix, else `bert_model.ckpt`, else the only `*.index` (all inside)."""
  latest = _state_file_prefix(directory)
  if latest:
    return latest
  conventional = os.path.join(directory, CHECKPOINT_NAME)
  if os.path.exists(conventional + ".index"):
    return conventional
  indexes = sorted(f for f in os.listdir(directory) if f.endswith(".index"))
  if len(indexes) == 1:
    return os.path.join(directory, indexes[0][:-len(".index")])
  if not indexes:
    raise UserError(f"{directory}: no TF checkpoint (*.index) in this directory")
  raise UserError(f"{directory}: several checkpoints {indexes}; pass the prefix of one, e.g. "
                  f"{os.path.join(directory, indexes[-1][:-len('.index')])}")


def read_weights(prefix: str) -> NamedWeights:
  """All variables of a name-based checkpoint, read lazily; errors name the file that failed."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  index = prefix + ".index"
  if not os.path.exists(index):
    raise UserError(f"{index}: no such checkpoint index file")
  try:
    reader = tf.train.load_checkpoint(prefix)
  except Exception as e:  # OpError, ValueError, IndexError...: the C++ reader's errors vary.
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    raise UserError(f"{index}: cannot read the checkpoint (truncated or corrupt?): {first}") from e
  shapes = {name: tuple(shape) for name, shape in reader.get_variable_to_shape_map().items()}
  if "_CHECKPOINTABLE_OBJECT_GRAPH" in shapes and not any(n.startswith("bert/") for n in shapes):
    raise UserError(f"{prefix}.index: an object-based TF2 checkpoint (tf.train.Checkpoint), not a "
                    "Google BERT name-based checkpoint; save Keras models as .keras or "
                    ".weights.h5 to load them here")

  def read(name: str) -> np.ndarray:
    try:
      return reader.get_tensor(name)
    except Exception as e:  # DataLossError, IndexError ("Read less bytes than requested"), ...
      data_files = sorted(f for f in os.listdir(os.path.dirname(prefix) or ".")
                          if f.startswith(os.path.basename(prefix) + ".data-"))
      target = os.path.join(os.path.dirname(prefix), data_files[0]) if data_files else prefix
      first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
      raise UserError(f"{target}: cannot read variable {name} (truncated or corrupt "
                      f"checkpoint data?): {first}") from e

  return NamedWeights(path=prefix, shapes=shapes, read=read)


def casing_from_name(path: str):
  """True/False when the release directory says uncased_/cased_ (the original naming), else None."""
  for part in reversed(os.path.abspath(path).split(os.sep)):
    lowered = part.lower()
    if lowered.startswith(("uncased_", "multi_cased_", "cased_", "wwm_uncased_", "wwm_cased_")):
      return "uncased" in lowered
  return None


def write_checkpoint(arrays: dict, config: ModelConfig, output_dir: str,
                     extra_files: dict | None = None) -> tuple[str, list]:
  """Writes bert_config.json, bert_model.ckpt.*, the state file and `extra_files` {name: source};
  moved in from a temporary directory, the index last (no readable half checkpoint)."""
  import tensorflow as tf

  values, warnings = config_to_google(config)
  os.makedirs(output_dir, exist_ok=True)
  tmp = tempfile.mkdtemp(prefix=".tmp_convert_", dir=output_dir)
  try:
    prefix = os.path.join(tmp, CHECKPOINT_NAME)
    names = sorted(arrays)
    with tf.device("/cpu:0"):
      tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                        tensors=[tf.constant(np.asarray(arrays[n], np.float32)) for n in names])
    write_json(os.path.join(tmp, CONFIG_NAME), values)
    with open(os.path.join(tmp, "checkpoint"), "w", encoding="utf-8") as f:
      f.write(f'model_checkpoint_path: "{CHECKPOINT_NAME}"\n'
              f'all_model_checkpoint_paths: "{CHECKPOINT_NAME}"\n')
    for name, source in (extra_files or {}).items():
      shutil.copyfile(source, os.path.join(tmp, name))
    files = sorted(os.listdir(tmp), key=lambda f: (f.endswith(".index"), f == "checkpoint", f))
    for name in files:
      os.replace(os.path.join(tmp, name), os.path.join(output_dir, name))
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
  return os.path.join(output_dir, CHECKPOINT_NAME), warnings
