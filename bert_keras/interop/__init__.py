"""Load released BERT checkpoints into our Keras models, and write them back in Google's layout.

  encoder, info = load_encoder(path, **overrides)      # -> (BertEncoder, CheckpointInfo)
  pretrainer, info = load_pretrainer(path, objective="mlm_nsp", **overrides)
  info = load_encoder_weights(encoder, path)           # into an encoder you already built
  prefix, warnings = save_google_checkpoint(encoder_or_pretrainer, output_dir, vocab_path=None)

`path`: a Google release (directory or prefix), a Hugging Face directory (safetensors only; pickles
are refused), our `.keras` file, our `.weights.h5` with its ModelConfig JSON beside it, or a
run_pretraining output directory. `overrides`: ModelConfig fields that leave the architecture alone,
and `dtype`. Bad input raises UserError naming the file, the variable and both shapes.
"""

from bert_keras.interop.casing import check_tokenizer_casing
from bert_keras.interop.checkpoint_info import CheckpointInfo
from bert_keras.interop.loader import (CheckpointPath, detect_format, load_encoder,
                                       load_encoder_weights, load_pretrainer, open_checkpoint,
                                       resolve_checkpoint, save_google_checkpoint)

__all__ = ["CheckpointInfo", "CheckpointPath", "check_tokenizer_casing", "detect_format",
           "load_encoder", "load_encoder_weights", "load_pretrainer", "open_checkpoint",
           "resolve_checkpoint", "save_google_checkpoint"]
