"""One entry point for every checkpoint format: detect it, build the model, copy and check weights.

Every format is renamed to Google names and copied through `weight_map` (our Keras files are loaded
with safe_mode first), so all get the same shape checks and error messages.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings as _warnings

from absl import logging

from bert_keras.errors import UserError
from bert_keras.interop import google_checkpoint, hf_checkpoint, weight_map
from bert_keras.interop.casing import casing_from_vocab
from bert_keras.interop.checkpoint_info import CheckpointInfo
from bert_keras.configs.model import ConfigError, ModelConfig

# Fields that fix tensor shapes or how they are read; a checkpoint decides them, overrides may not.
ARCHITECTURE_FIELDS = ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                       "max_position_embeddings", "type_vocab_size", "attention")
_MODEL_CONFIG_NAMES = ("model_config.json", "config.json")
# What makes a directory a run_pretraining model_dir, and where its run exports the encoder.
PRETRAINING_CONFIG_NAME = "training_config.json"
PRETRAINING_EXPORT_DIR = "export"


@dataclasses.dataclass(frozen=True)
class CheckpointPath:
  """A checkpoint path with its format detected once; str() is the path as given."""
  given: str
  format: str
  path: str

  def __str__(self) -> str:
    return self.given


def resolve_checkpoint(path: str) -> CheckpointPath:
  """The format and location of the checkpoint at `path` (`detect_format`), for passing along."""
  return CheckpointPath(os.fspath(path), *detect_format(path))


def detect_format(path: str) -> tuple[str, str]:
  """(format, resolved path): the Google checkpoint prefix, HF directory or Keras file to read."""
  path = os.fspath(path)
  if path.endswith(".index") and os.path.isfile(path):
    return "google", path[:-len(".index")]
  if os.path.isfile(path + ".index"):
    return "google", path
  if not os.path.exists(path):
    raise UserError(f"{path}: no such checkpoint file or directory")
  if os.path.isfile(path):
    if path.endswith(".keras"):
      return "keras", path
    if path.endswith(".weights.h5"):
      return "keras_weights", path
    if path.endswith(".safetensors"):
      return "hf", os.path.dirname(path) or "."
    if path.endswith((".bin", ".pt", ".pth", ".pkl", ".ckpt")):
      raise UserError(f"{path}: pickle-based weights are never loaded (they can run code); "
                      "use model.safetensors")
    raise UserError(f"{path}: unknown checkpoint file; expected a directory, a TF checkpoint "
                    "prefix, .keras, .weights.h5 or .safetensors")
  files = set(os.listdir(path))
  if _is_pretraining_model_dir(files):
    return detect_format(_pretraining_export(path))
  if hf_checkpoint.WEIGHTS_NAME in files or hf_checkpoint.SHARD_INDEX_NAME in files:
    return "hf", path
  if google_checkpoint.CONFIG_NAME in files or any(f.endswith(".index") for f in files):
    return "google", google_checkpoint.find_prefix(path)
  for preferred in ("encoder.keras", "pretrainer.keras", "model.keras"):
    if preferred in files:
      return "keras", os.path.join(path, preferred)
  for ext, fmt in ((".keras", "keras"), (".weights.h5", "keras_weights")):
    found = sorted(f for f in files if f.endswith(ext))
    if len(found) == 1:
      return fmt, os.path.join(path, found[0])
    if len(found) > 1:
      raise UserError(f"{path}: several {ext} files {found}; pass one of them")
  if "pytorch_model.bin" in files:
    hf_checkpoint.weights_files(path)  # raises the pickle message.
  raise UserError(f"{path}: no checkpoint found (expected bert_config.json + bert_model.ckpt.*, "
                  "config.json + model.safetensors, a .keras or a .weights.h5 file)")


def _is_pretraining_model_dir(files: set) -> bool:
  """run_pretraining's model_dir: its training_config.json beside Trainer checkpoints or export/."""
  return PRETRAINING_CONFIG_NAME in files and (
      PRETRAINING_EXPORT_DIR in files or "checkpoint" in files
      or any(f.startswith("ckpt-") for f in files))


def _pretraining_export(model_dir: str) -> str:
  """A run_pretraining model_dir's export/ (its ckpt-* files are training state)."""
  export = os.path.join(model_dir, PRETRAINING_EXPORT_DIR)
  if os.path.isdir(export) and os.listdir(export):
    return export
  raise UserError(f"{model_dir}: a run_pretraining model_dir with no {PRETRAINING_EXPORT_DIR}/ "
                  "yet; its run writes the encoder there when it finishes (its ckpt-* files are "
                  "training state). Finish the run (the same run_pretraining command resumes it), "
                  f"then pass {model_dir} or {export}; to continue pretraining from the checkpoint "
                  f"instead, pass run_pretraining --init_checkpoint={model_dir}")


def check_vocab_size(vocab_path, config: ModelConfig, config_path: str) -> None:
  if vocab_path is None:
    return
  with open(vocab_path, encoding="utf-8", errors="replace") as f:
    size = sum(1 for _ in f)
  if size != config.vocab_size:
    raise UserError(f"{vocab_path}: {size} vocabulary entries but {config_path} says "
                    f"vocab_size={config.vocab_size}")


def _find_encoder(model):
  from bert_keras.models.bert_encoder import BertEncoder

  if isinstance(model, BertEncoder):
    return model
  if isinstance(getattr(model, "encoder", None), BertEncoder):
    return model.encoder
  for layer in getattr(model, "layers", []):
    if isinstance(layer, BertEncoder):
      return layer
  return None


def _keras_slots(model):
  from bert_keras.models.bert_pretrainer import BertPretrainer

  if isinstance(model, BertPretrainer):
    return weight_map.pretrainer_slots(model, optional_heads=False)
  return weight_map.encoder_slots(_find_encoder(model))


def _named_weights_of(model, path: str) -> weight_map.NamedWeights:
  arrays = weight_map.collect(_keras_slots(model))
  return weight_map.NamedWeights(path=path, shapes={n: a.shape for n, a in arrays.items()},
                                 read=arrays.__getitem__)


def _load_keras_file(path: str):
  from bert_keras import keras_classes

  try:
    model = keras_classes.load_model(path)  # safe_mode=True: no lambdas or code are deserialised.
  except (ValueError, OSError, KeyError, TypeError) as e:
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    raise UserError(f"{path}: cannot load the .keras file (truncated, corrupt or not a "
                    f"bert_keras model?): {first}") from e
  except Exception as e:  # zipfile.BadZipFile and h5py errors have no common base class.
    raise UserError(f"{path}: cannot load the .keras file: {type(e).__name__}: {e}") from e
  if _find_encoder(model) is None:
    raise UserError(f"{path}: holds a {type(model).__name__} with no BertEncoder inside")
  return model


def _model_config_beside(weights_path: str):
  """(ModelConfig, path) from `<stem>.json`, model_config.json, config.json or any JSON beside it."""
  directory = os.path.dirname(weights_path) or "."
  stem = os.path.basename(weights_path)[:-len(".weights.h5")]
  others = sorted(f for f in os.listdir(directory) if f.endswith(".json"))
  for name in dict.fromkeys([f"{stem}.json", *_MODEL_CONFIG_NAMES, *others]):  # in order, once
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
      continue
    try:
      with open(path, encoding="utf-8") as f:
        values = json.load(f)
    except (OSError, ValueError, RecursionError):
      continue  # not a readable config: try the next candidate
    for candidate in (values, *(values.get(k) for k in ("model", "model_config")
                                if isinstance(values, dict))):
      if isinstance(candidate, dict):
        try:
          return ModelConfig.from_dict(candidate), path
        except (ConfigError, TypeError):
          continue
  raise UserError(f"{weights_path}: no model config JSON beside it (looked for {stem}.json, "
                  "model_config.json, config.json or any JSON holding ModelConfig fields)")


def _holds_nested_encoder(path: str) -> bool:
  try:
    import h5py  # pylint: disable=import-outside-toplevel

    with h5py.File(path, "r") as f:
      return any(name.startswith("bert_encoder") for name in f.get("layers", {}))
  except Exception:  # unreadable files are reported by the load below
    return False


def _load_weights_file(path: str, config: ModelConfig):
  """Rebuilds the model the .weights.h5 was saved from: an encoder, else a pretrainer."""
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.configs.training import OBJECTIVES
  from bert_keras.models.bert_pretrainer import BertPretrainer

  builders = [("BertEncoder", lambda: BertEncoder.from_model_config(config))]
  for objective in OBJECTIVES:
    if (objective == "ltr") == (config.attention == "causal"):
      builders.append((f"BertPretrainer({objective})", lambda o=objective: BertPretrainer(
          BertEncoder.from_model_config(config), o)))
  if _holds_nested_encoder(path):  # saved from a model around an encoder: try pretrainers first
    builders = builders[1:] + builders[:1]
  errors = []
  for label, build in builders:
    model = build()
    try:
      with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        model.load_weights(path)
      return model
    except ValueError as e:
      errors.append(f"{label}: {str(e).strip().splitlines()[0]}")
    except Exception as e:  # h5py raises OSError subclasses and KeyError for damaged files.
      raise UserError(f"{path}: cannot read the weights file (truncated or corrupt?): "
                      f"{type(e).__name__}: {e}") from e
  raise UserError(f"{path}: matches neither an encoder nor a pretrainer built from its config "
                  f"({'; '.join(errors)}); save task models with model.save('x.keras') instead")


@dataclasses.dataclass
class OpenedCheckpoint:
  info: CheckpointInfo
  weights: weight_map.NamedWeights
  config_path: str


def open_checkpoint(path: str | CheckpointPath, config_required: bool = True,
                    read_weights: bool = True) -> OpenedCheckpoint:
  """Reads config and weights (lazily; none unless `read_weights`, but a .keras file is loaded) of
  any supported format, renamed to Google names."""
  fmt, resolved = (path.format, path.path) if isinstance(path, CheckpointPath) else detect_format(path)
  lower_case = None
  if fmt == "google":
    directory = os.path.dirname(resolved) or "."
    config_path = os.path.join(directory, google_checkpoint.CONFIG_NAME)
    config = None
    if os.path.isfile(config_path):
      config = google_checkpoint.read_config(config_path)
    elif config_required:
      raise UserError(f"{config_path}: no such file; a Google checkpoint needs its "
                      "bert_config.json beside it")
    weights = lambda: google_checkpoint.read_weights(resolved)
    lower_case = google_checkpoint.casing_from_name(resolved)
  elif fmt == "hf":
    config_path = os.path.join(resolved, hf_checkpoint.CONFIG_NAME)
    config = hf_checkpoint.read_config(resolved)
    weights = lambda: hf_checkpoint.read_weights(hf_checkpoint.weights_files(resolved))
    lower_case = hf_checkpoint.lower_case(resolved)
  elif fmt == "keras":
    model = _load_keras_file(resolved)
    config, config_path = _find_encoder(model).model_config, resolved
    weights = lambda: _named_weights_of(model, resolved)
  else:
    config, config_path = _model_config_beside(resolved)
    weights = lambda: _named_weights_of(_load_weights_file(resolved, config), resolved)
  vocab = os.path.join(resolved if fmt == "hf" else os.path.dirname(resolved) or ".", "vocab.txt")
  vocab = vocab if os.path.isfile(vocab) else None
  if config is not None:
    check_vocab_size(vocab, config, config_path)
  if lower_case is None and vocab is not None:
    lower_case = casing_from_vocab(vocab)
  info = CheckpointInfo(format=fmt, path=resolved, config=config, lower_case=lower_case,
                        vocab_path=vocab)
  return OpenedCheckpoint(info=info, weights=weights() if read_weights else None,
                          config_path=config_path)


def _apply_overrides(config: ModelConfig, overrides: dict, config_path: str) -> ModelConfig:
  known = {f.name for f in dataclasses.fields(ModelConfig)}
  unknown = sorted(set(overrides) - known)
  if unknown:
    raise UserError(f"unknown override(s) {unknown}; expected ModelConfig fields {sorted(known)}")
  for name in ARCHITECTURE_FIELDS:
    if name in overrides and overrides[name] != getattr(config, name):
      raise UserError(f"override {name}={overrides[name]!r} disagrees with the checkpoint's "
                      f"{name}={getattr(config, name)!r} ({config_path})")
  try:
    return config.replace(**overrides)
  except ConfigError as e:
    raise UserError(f"overrides {overrides}: {e}") from e


def _fill(opened: OpenedCheckpoint, slots: list, model_desc: str, config: ModelConfig) -> CheckpointInfo:
  """Checks for stray encoder layers, copies the weights and records what happened in the info."""
  weights, info = opened.weights, opened.info
  stray = weight_map.unexpected_names(slots, weights)
  if stray:
    raise UserError(f"{weights.path}: checkpoint variable(s) {stray[:3]} have no place in the model "
                    f"({model_desc}); does {opened.config_path} match the checkpoint?")
  result = weight_map.assign(slots, weights, model_desc)
  taken = set(result["loaded"])
  info.config = config
  info.loaded = result["loaded"]
  info.missing = result["missing"]
  info.unused = sorted(weights.unused + [n for n in weights.shapes if n not in taken])
  for name in info.missing:
    info.warnings.append(f"{name} is not in {weights.path}; it keeps its fresh initialisation")
  for message in info.warnings:
    logging.warning("%s", message)
  return info


def _describe(config: ModelConfig, source: str) -> str:
  return (f"num_layers={config.num_layers}, hidden_size={config.hidden_size}, "
          f"vocab_size={config.vocab_size}, from {source}")


def build_encoder(opened: OpenedCheckpoint, objective: str | None = None, **overrides):
  """(BertEncoder, CheckpointInfo) from an already opened checkpoint (see `load_encoder`); with an
  `objective`, (BertPretrainer, CheckpointInfo) (see `load_pretrainer`)."""
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.models.bert_pretrainer import BertPretrainer

  dtype = overrides.pop("dtype", None)
  config = _apply_overrides(opened.info.config, overrides, opened.config_path)
  desc = _describe(config, opened.config_path)
  encoder = BertEncoder.from_model_config(config, dtype=dtype)
  if objective is None:
    return encoder, _fill(opened, weight_map.encoder_slots(encoder), desc, config)
  try:
    pretrainer = BertPretrainer(encoder, objective)
  except ValueError as e:
    raise UserError(f"{opened.info.path}: {e}") from e
  desc += f", objective={objective!r}"
  return pretrainer, _fill(opened, weight_map.pretrainer_slots(pretrainer), desc, config)


def load_encoder(path: str | CheckpointPath, **overrides):
  """(BertEncoder, CheckpointInfo) from any supported checkpoint (package docstring)."""
  return build_encoder(open_checkpoint(path), **overrides)


def load_encoder_weights(encoder, path: str) -> CheckpointInfo:
  """Copies a checkpoint's encoder weights into an existing BertEncoder, whose architecture its
  config (when it has one) must match."""
  opened = open_checkpoint(path, config_required=False)
  for name in ARCHITECTURE_FIELDS if opened.info.config is not None else ():
    ours, theirs = getattr(encoder.model_config, name), getattr(opened.info.config, name)
    if theirs != ours:
      raise UserError(f"{opened.config_path}: checkpoint has {name}={theirs!r} but the model has "
                      f"{name}={ours!r}")
  desc = _describe(encoder.model_config, "the given encoder")
  return _fill(opened, weight_map.encoder_slots(encoder), desc, encoder.model_config)


def load_pretrainer(path: str, objective: str = "mlm_nsp", **overrides):
  """(BertPretrainer, CheckpointInfo); heads the checkpoint lacks stay fresh (`info.missing`)."""
  return build_encoder(open_checkpoint(path), objective, **overrides)


def save_google_checkpoint(model, output_dir: str, vocab_path: str | None = None):
  """Writes a BertEncoder or BertPretrainer (with its heads) as a Google release directory;
  returns (prefix, warnings)."""
  encoder = _find_encoder(model)
  if encoder is None:
    raise UserError(f"{type(model).__name__} holds no BertEncoder to export")
  extra = {"vocab.txt": vocab_path} if vocab_path else None
  return google_checkpoint.write_checkpoint(weight_map.collect(_keras_slots(model)),
                                            encoder.model_config, output_dir, extra)
