"""Load released BERT checkpoints into our Keras models, and write them back in Google's layout.

Entry points (use these; the modules below are their parts):

  encoder, info = load_encoder(path_or_dir, **overrides)     # -> (BertEncoder, CheckpointInfo)
  pretrainer, info = load_pretrainer(path_or_dir, objective="mlm_nsp", **overrides)
  info = load_encoder_weights(encoder, path_or_dir)          # into an encoder you already built
  prefix, warnings = save_google_checkpoint(encoder_or_pretrainer, output_dir, vocab_path=None)
  config = load_model_config(path_or_dir)                    # ModelConfig only, weights unread
  checkpoint = resolve_checkpoint(path_or_dir)               # format detected once, passed along

`path_or_dir` may be any of (the format is detected, `detect_format`):
  - a Google release: a directory with bert_config.json + bert_model.ckpt.{index,data-*} (+ vocab.txt),
    or a checkpoint prefix such as .../bert_model.ckpt (bert_config.json must sit beside it);
  - a Hugging Face BERT directory: config.json + model.safetensors (or sharded safetensors), read with
    safetensors.numpy only; pytorch_model.bin (pickle) is refused;
  - our own `.keras` file (BertEncoder, BertPretrainer or a task model holding a BertEncoder), or a
    directory holding one (encoder.keras / pretrainer.keras preferred);
  - our own `.weights.h5` of a BertEncoder or BertPretrainer, with its ModelConfig JSON beside it
    (<stem>.json, model_config.json, config.json, or a resolved config with a "model" entry).

`overrides` are ModelConfig fields that leave the architecture alone (dropout_rate,
attention_dropout_rate, hidden_act, initializer_range, layer_norm_epsilon) and `dtype`; architecture
fields must agree with the checkpoint. Scripts expose this as an `--init_checkpoint` flag:

  encoder, info = interop.load_encoder(FLAGS.init_checkpoint, dropout_rate=0.1)
  interop.check_tokenizer_casing(info.lower_case, tokenizer, info.path)

`CheckpointInfo` reports the format, the ModelConfig, the checkpoint's casing (lower_case), a
vocab.txt found beside it, and which variables were loaded, missing (fresh heads) or unused.
All bad input (missing or corrupt files, shape/config/vocab disagreements) raises `UserError` naming
the file, the variable and both shapes. Nothing is unpickled or evaluated.

Conversions between formats: `scripts/convert_checkpoint.py --from google|hf|keras --to keras|google`.
"""

from bert_keras.interop.casing import check_tokenizer_casing
from bert_keras.interop.checkpoint_info import CheckpointInfo
from bert_keras.interop.loader import (CheckpointPath, detect_format, load_encoder,
                                       load_encoder_weights, load_model_config, load_pretrainer,
                                       resolve_checkpoint, save_google_checkpoint)

__all__ = ["CheckpointInfo", "CheckpointPath", "check_tokenizer_casing", "detect_format",
           "load_encoder", "load_encoder_weights", "load_model_config", "load_pretrainer",
           "resolve_checkpoint", "save_google_checkpoint"]
