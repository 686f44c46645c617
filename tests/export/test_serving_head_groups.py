"""Exports with every Transformer block split into head groups give the unsplit outputs and record
their head groups. (Where the graph is split: bench/check_graphs.py.)"""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.export import export_task_model as exporter
from bert_keras.export.serving_options import ServingOptions
from bert_keras.export.export_config import ExportConfig
from bert_keras.kernels.host_tuning import DEFAULT_HEAD_GROUPS, UNSPLIT_MIN_HIDDEN
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config

SEQ = 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad", "a",
         "plot", "##s", ",", "."]
TEXTS = ["the film was good", "a bad plot , the films", "", "good good good " * 20, "bad"]


def _packed(tokenizer, texts):
  """Packed int32 inputs built in Python: [CLS] pieces [SEP], padded with [PAD] (0) to SEQ."""
  word_ids = np.zeros((len(texts), SEQ), np.int32)
  for row, pieces in enumerate(tokenizer.encode(texts)):
    pieces = [tokenizer.cls_id] + pieces[:SEQ - 2] + [tokenizer.sep_id]
    word_ids[row, :len(pieces)] = pieces
  return {"input_word_ids": tf.constant(word_ids),
          "input_mask": tf.constant((word_ids > 0).astype(np.int32)),
          "input_type_ids": tf.zeros_like(word_ids)}


def _assert_keras_outputs(encoder, tokenizer, serve_text, serve_ids, label, rows_tried):
  for rows in rows_tried:
    packed = _packed(tokenizer, TEXTS[:rows])
    direct = encoder(packed, training=False)
    served = [serve_ids(packed)] + ([serve_text(tf.constant(TEXTS[:rows]))] if serve_text else [])
    for outputs in served:
      for name in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(outputs[name].numpy(), direct[name].numpy(), atol=1e-5,
                                   err_msg=f"{name}, {label}, {rows} rows")


@pytest.fixture(scope="module")
def export(tmp_path_factory):
  keras.utils.set_random_seed(0)
  tokenizer = BertTokenizer(vocabulary=VOCAB)
  config = get_model_config("bert_tiny", vocab_size=len(VOCAB), hidden_size=16, num_layers=2,
                            num_heads=2, intermediate_size=32, max_position_embeddings=SEQ)
  encoder = BertEncoder.from_model_config(config)
  path = exporter.export_task_model(encoder, "encoder", tokenizer,
                                    str(tmp_path_factory.mktemp("head_groups") / "g"), SEQ,
                                    options=ServingOptions(head_groups=2))
  return encoder, tokenizer, path


def test_saved_split_export_gives_the_keras_outputs(export):
  encoder, tokenizer, path = export
  assert not any(hasattr(block, "head_groups") for block in encoder.blocks)  # left as it was
  with open(os.path.join(path, "assets.extra", exporter.EXPORT_INFO), encoding="utf-8") as f:
    assert json.load(f)["head_groups"] == 2
  loaded = tf.saved_model.load(path)
  _assert_keras_outputs(encoder, tokenizer,
                        lambda text: loaded.signatures["serving_text"](text_a=text),
                        lambda ids: loaded.signatures["serving_tokenized"](**ids), "saved",
                        (1, 3, len(TEXTS)))


@pytest.mark.parametrize("groups", [None, 1, 2])
def test_other_head_groups(export, groups):
  encoder, tokenizer, _ = export
  module = exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                         options=ServingOptions(head_groups=groups))
  groups = groups or DEFAULT_HEAD_GROUPS
  assert module.head_groups == groups and module.metadata()["head_groups"] == groups
  _assert_keras_outputs(encoder, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                        f"{groups} groups", (1, len(TEXTS)))
  assert not any(hasattr(block, "head_groups") for block in encoder.blocks)


def test_the_reference_implementation_exports_the_same_outputs(export):
  """What a GPU or TPU host exports by default: the reference blocks, no split."""
  encoder, tokenizer, _ = export
  module = exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                         options=ServingOptions(implementation="reference"))
  assert module.implementation == "reference"
  _assert_keras_outputs(encoder, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                        "reference", (1, len(TEXTS)))


def test_default_head_groups_follow_the_width(export):
  # Narrow models (BERT-mini) split by default; from BERT-Base's width on the default graph is
  # unsplit (host_tuning.UNSPLIT_MIN_HIDDEN), while an explicit head_groups still splits.
  encoder, tokenizer, _ = export
  keras.utils.set_random_seed(1)
  wide = BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=len(VOCAB), hidden_size=UNSPLIT_MIN_HIDDEN, num_layers=1,
      num_heads=12, intermediate_size=32, max_position_embeddings=SEQ))
  for model, groups in ((encoder, DEFAULT_HEAD_GROUPS), (wide, 1)):
    module = exporter.build_serving_module(model, "encoder", tokenizer, SEQ)
    assert module.head_groups == groups and module.metadata()["head_groups"] == groups
  module = exporter.build_serving_module(wide, "encoder", tokenizer, SEQ,
                                         options=ServingOptions(head_groups=2))
  assert module.head_groups == 2
  _assert_keras_outputs(wide, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                        "wide, 2 groups", (1, len(TEXTS)))


def test_bad_head_groups_fail(export, tmp_path):
  encoder, tokenizer, _ = export
  with pytest.raises(ValueError, match="head_groups"):
    exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                  options=ServingOptions(head_groups=0))
  with pytest.raises(ValueError, match="head_groups=3 does not divide num_heads=2"):
    exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                  options=ServingOptions(head_groups=3))
  with pytest.raises(UserError, match="head_groups"):
    ExportConfig(output_dir=str(tmp_path), init_checkpoint="x", head_groups=0)
