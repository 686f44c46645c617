"""Loads the project's .keras files in any process: a fresh process that has not imported the
module of a "bert_keras>ClassName" fails with "Could not locate class", so every registering module
(MODULES; a test keeps it complete) is imported first. Safe mode: nothing in the file is run.
"""

from __future__ import annotations

import importlib

# Every module with a `register_keras_serializable(package="bert_keras")` class.
MODULES = (
    "bert_keras.models.attention_mask",
    "bert_keras.models.position_embedding",
    "bert_keras.models.transformer_block",
    "bert_keras.models.bert_encoder",
    "bert_keras.models.masked_lm_head",
    "bert_keras.models.bert_pretrainer",
    "bert_keras.models.gpt_decoder",
    "bert_keras.models.gpt_language_model",
    "bert_keras.models.gpt_task_model",
    "bert_keras.models.reverse_real_tokens",
    "bert_keras.models.backbone",
    "bert_keras.models.heads.bert_classifier",
    "bert_keras.models.heads.bert_feature_classifier",
    "bert_keras.models.heads.bert_feature_tagger",
    "bert_keras.models.heads.bert_multiple_choice",
    "bert_keras.models.heads.bert_span_labeler",
    "bert_keras.models.heads.bert_token_classifier",
    "bert_keras.gpt.gpt_input_transform",
    "bert_keras.gpt.gpt_tokenizer",
    "bert_keras.text.bert_tokenizer",
    "bert_keras.text.bert_packer",
    "bert_keras.training.fused_adamw",
    "bert_keras.training.lamb",
    "bert_keras.training.optimization",
)


def register_all() -> None:
  for name in MODULES:
    importlib.import_module(name)


def load_model(path: str, **kwargs):
  """`keras.saving.load_model(path, **kwargs)` after `register_all()`."""
  import keras  # pylint: disable=import-outside-toplevel

  register_all()
  return keras.saving.load_model(path, **kwargs)
