"""Exports with every Transformer block split into row groups give the unsplit outputs."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.export import export_task_model as exporter
from bert_keras.export.export_config import ExportConfig
from bert_keras.export.serving_module import tokenized_specs
from bert_keras.kernels.host_tuning import (CONTRACTION_GROUPS_MAX_POSITIONS, DEFAULT_ROW_GROUPS,
                                            UNSPLIT_MIN_HIDDEN)
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config

SEQ = 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad", "a",
         "plot", "##s", ",", "."]
TEXTS = ["the film was good", "a bad plot , the films", "", "good good good " * 20, "bad"]


def _saved_split_ops(path):
  """SplitV ops in the SavedModel's function library (the row groups' splits)."""
  from tensorflow.core.protobuf import saved_model_pb2
  proto = saved_model_pb2.SavedModel()
  with open(os.path.join(path, "saved_model.pb"), "rb") as f:
    proto.ParseFromString(f.read())
  library = proto.meta_graphs[0].graph_def.library
  return sum(1 for fn in library.function for node in fn.node_def if node.op == "SplitV")


def _model_split_ops(module):
  """SplitV ops (the row groups' splits) in the traced model function of an in-memory serving
  module, the functions of its conds included (calls of few positions take another branch)."""
  graph = module._run_model.get_concrete_function(tokenized_specs()).graph.as_graph_def()
  nodes = list(graph.node) + [node for fn in graph.library.function for node in fn.node_def]
  return sum(1 for node in nodes if node.op == "SplitV")


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
                                    str(tmp_path_factory.mktemp("row_groups") / "g"), SEQ,
                                    row_groups=2)
  return encoder, tokenizer, path


def test_saved_split_export_gives_the_keras_outputs(export):
  encoder, tokenizer, path = export
  assert not any(hasattr(block, "row_groups") for block in encoder.blocks)  # left as it was
  with open(os.path.join(path, "assets.extra", exporter.EXPORT_INFO), encoding="utf-8") as f:
    assert json.load(f)["row_groups"] == 2
  assert _saved_split_ops(path) > 0
  loaded = tf.saved_model.load(path)
  _assert_keras_outputs(encoder, tokenizer,
                        lambda text: loaded.signatures["serving_text"](text_a=text),
                        lambda ids: loaded.signatures["serving_tokenized"](**ids), "saved",
                        (1, 3, len(TEXTS)))


@pytest.mark.parametrize("groups", [None, 1, 3])
def test_other_row_groups(export, groups):
  encoder, tokenizer, _ = export
  module = exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                         **({} if groups is None else {"row_groups": groups}))
  groups = groups or DEFAULT_ROW_GROUPS
  assert module.row_groups == groups and module.metadata()["row_groups"] == groups
  assert (_model_split_ops(module) > 0) == (groups > 1)
  _assert_keras_outputs(encoder, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                        f"{groups} groups", (1, len(TEXTS)))
  assert not any(hasattr(block, "row_groups") for block in encoder.blocks)


def test_the_reference_implementation_exports_the_same_outputs(export):
  """What a GPU or TPU host exports by default: the reference blocks, no split."""
  encoder, tokenizer, _ = export
  module = exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                         implementation="reference")
  assert module.implementation == "reference" and _model_split_ops(module) == 0
  _assert_keras_outputs(encoder, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                        "reference", (1, len(TEXTS)))


def test_default_row_groups_follow_the_width(export):
  # Narrow models (BERT-mini) split by default; from BERT-Base's width on the default graph is
  # unsplit (host_tuning.UNSPLIT_MIN_HIDDEN), while an explicit row_groups still splits.
  encoder, tokenizer, _ = export
  keras.utils.set_random_seed(1)
  wide = BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=len(VOCAB), hidden_size=UNSPLIT_MIN_HIDDEN, num_layers=1,
      num_heads=12, intermediate_size=32, max_position_embeddings=SEQ))
  for model, groups in ((encoder, DEFAULT_ROW_GROUPS), (wide, 1)):
    module = exporter.build_serving_module(model, "encoder", tokenizer, SEQ)
    assert module.row_groups == groups and module.metadata()["row_groups"] == groups
    assert (_model_split_ops(module) > 0) == (groups > 1)
  module = exporter.build_serving_module(wide, "encoder", tokenizer, SEQ, row_groups=2)
  assert module.row_groups == 2 and _model_split_ops(module) > 0
  _assert_keras_outputs(wide, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                        "wide, 2 groups", (1, len(TEXTS)))


def test_calls_of_few_positions_split_the_contraction(export):
  # Split exports run calls of at most CONTRACTION_GROUPS_MAX_POSITIONS positions with every
  # projection split along its contraction (equal-sized `Split`s of the kernels), the others by
  # rows; unsplit exports have neither. Both give the Keras outputs (1 row of 16 positions: the
  # contraction; 5 rows: the row groups).
  encoder, tokenizer, _ = export
  for groups in (2, 1):
    module = exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ, row_groups=groups)
    graph = module._run_model.get_concrete_function(tokenized_specs()).graph.as_graph_def()
    nodes = list(graph.node) + [node for fn in graph.library.function for node in fn.node_def]
    assert any(node.op == "Split" for node in nodes) == (groups > 1)
    assert CONTRACTION_GROUPS_MAX_POSITIONS >= SEQ and 5 * SEQ > CONTRACTION_GROUPS_MAX_POSITIONS
    _assert_keras_outputs(encoder, tokenizer, None, lambda ids: module.serve_tokenized(**ids),
                          f"{groups} groups", (1, len(TEXTS)))


def test_xla_model_stays_unsplit(export):
  # XLA's CPU code runs one op after another: the split would only add ops there. (Its outputs
  # are checked in test_serving_speed_auto_jit.py.)
  encoder, tokenizer, _ = export
  module = exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ, jit_compile=True,
                                         row_groups=2)
  assert module.row_groups == 2 and _model_split_ops(module) == 0


def test_bad_row_groups_fail(export, tmp_path):
  encoder, tokenizer, _ = export
  with pytest.raises(ValueError, match="row_groups"):
    exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ, row_groups=0)
  with pytest.raises(UserError, match="row_groups"):
    ExportConfig(output_dir=str(tmp_path), encoder_checkpoint="x", row_groups=0)
