"""The .tflite export run by bert_keras.serving.litert answers as the SavedModel's `serve` does.

Tiny untrained models of every kind the LiteRT export supports (tests/export/tiny_exports.py),
compared with the in-memory twin of the SavedModel (`build_serving_module`, the same traced
functions the SavedModel saves) on the inputs the exports are tested with: empty strings, a
5,000-word text, CJK, accents and mixed lengths in one batch.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_keras.configs.base import ConfigError
from bert_keras import resources
from bert_keras.configs.export import ExportConfig
from bert_keras.errors import UserError
from bert_keras.export import export_task_model as exporter
from bert_keras.export.export_config import run_export
from bert_keras.export.litert_export import export_litert
from bert_keras.serving import litert
from tests.export import tiny_exports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LONG = " ".join(["word"] * 2500 + ["Straße", "naïve", "東京", "über"] * 625)  # 5,000 words
TEXTS = ["", "a gripping film", "Ünïcödé ÀCCENTS and CJK 東京大学 で 日本語", LONG,
         "short", "   ", "Mr. O'Neil's $3.50 e-mail: don't!",
         # Where tokenizers often part from the original BERT rules (../shared/DATA.md): a word of
         # 150 characters (the original's limit is 200), a literal [CLS], characters NFKC would
         # fold, control characters, and a capital final sigma (Python's lower() gives σ).
         "x" * 150 + " " + "y" * 201, "[CLS] is [SEP] text [MASK]", "… ß ﬁ Ⅻ x² a\x07b\x00c", "ΟΔΟΣ ΣΑΣ"]
PAIRS = ["the second one", "", LONG, "東京", "", "x", "Why?", "a", "[UNK]", "ß", "Σ"]


@pytest.fixture(scope="module")
def vocab():
  return tiny_exports.tokenizer()


def _both(kind: str, vocab, tmp_path_factory, quantize: str = "none"):
  """(in-memory SavedModel module, loaded .tflite) of the tiny `kind`."""
  export_kind, model, options = tiny_exports.build(kind, vocab)
  module = exporter.build_serving_module(model, export_kind, vocab, tiny_exports.SEQ, **options)
  path = str(tmp_path_factory.mktemp(kind) / f"{kind}.tflite")
  export_litert(model, export_kind, vocab, path, tiny_exports.SEQ, quantize=quantize, **options)
  return module, litert.load(path)


def _assert_same(expected: dict, actual: dict):
  assert sorted(actual) == sorted(expected)
  for name, value in expected.items():
    value = np.asarray(value.numpy())
    assert actual[name].shape == value.shape, name
    if value.dtype.kind in "fc":
      np.testing.assert_allclose(actual[name], value, atol=1e-5, rtol=0, err_msg=name)
    else:
      np.testing.assert_array_equal(actual[name], value, err_msg=name)


@pytest.mark.parametrize("kind", ["encoder", "classification"])
def test_text_kinds_answer_as_the_saved_model(kind, vocab, tmp_path_factory):
  module, model = _both(kind, vocab, tmp_path_factory)
  assert (model.kind, model.task) == (kind, f"tiny_{kind}")
  _assert_same(module.serve(tf.constant(TEXTS)), model.serve(TEXTS))
  _assert_same(module.serve(tf.constant(TEXTS), tf.constant(PAIRS)), model.serve(TEXTS, PAIRS))
  _assert_same(module.serve(tf.constant("a gripping film")), model.serve("a gripping film"))
  _assert_same(module.serve(tf.constant([], tf.string)), model.serve([]))  # an empty batch
  with pytest.raises(UserError, match="text_a has 2 rows but text_b has 1"):
    model.serve(["a", "b"], ["c"])


def test_pair_regression_and_multiple_choice_answer_as_the_saved_model(vocab, tmp_path_factory):
  module, model = _both("regression", vocab, tmp_path_factory)
  _assert_same(module.serve(tf.constant(TEXTS), tf.constant(PAIRS)), model.serve(TEXTS, PAIRS))
  with pytest.raises(UserError, match="fine-tuned on sentence pairs"):
    model.serve(TEXTS)
  module, model = _both("multiple_choice", vocab, tmp_path_factory)
  endings = [[t, p, "東京", ""] for t, p in zip(TEXTS, PAIRS)]
  _assert_same(module.serve(tf.constant(TEXTS), tf.constant(endings)), model.serve(TEXTS, endings))
  _assert_same(module.serve(tf.constant("ctx"), tf.constant(["a", "b"])),
               model.serve("ctx", ["a", "b"]))


def test_tagging_answers_as_the_saved_model(vocab, tmp_path_factory):
  # doc_stride 15: the 5,000-word text runs as hundreds of windows, each piece tagged in the
  # window where it has the most context; entities keep their character offsets.
  module, model = _both("tagging", vocab, tmp_path_factory)
  expected = module.serve(tf.constant(TEXTS))
  assert expected["num_entities"].numpy().sum() > 10  # (untrained: tags of every kind)
  _assert_same(expected, model.serve(TEXTS))
  _assert_same(module.serve(tf.constant(TEXTS[2])), model.serve(TEXTS[2]))


def test_squad_answers_as_the_saved_model(vocab, tmp_path_factory):
  # SQuAD 2.0 settings, doc_stride 8: long contexts run as many windows; the answer is the best
  # span over them (or no answer), with its character offsets in the context.
  module, model = _both("squad", vocab, tmp_path_factory)
  questions = [p or "what?" for p in PAIRS]
  expected = module.serve(tf.constant(questions), tf.constant(TEXTS))
  _assert_same(expected, model.serve(questions, TEXTS))
  _assert_same(module.serve(tf.constant("Who?"), tf.constant(LONG)), model.serve("Who?", LONG))


def test_a_foreign_or_missing_file_is_one_clear_error(tmp_path):
  with pytest.raises(UserError, match="no such .tflite file"):
    litert.load(str(tmp_path / "none.tflite"))


def test_quantize_needs_the_litert_format():
  with pytest.raises(ConfigError, match="quantize=int8: applies to format=litert only"):
    ExportConfig(output_dir="out", init_checkpoint="ckpt", quantize="int8")
  with pytest.raises(ConfigError, match="format='onnx'"):
    ExportConfig(output_dir="out", init_checkpoint="ckpt", format="onnx")
  assert ExportConfig(output_dir="out", init_checkpoint="ckpt", format="litert",
                      quantize="int8").quantize == "int8"


def test_the_litert_format_writes_model_tflite_instead_of_the_saved_model(vocab, tmp_path):
  # export_model.py --format=litert: model.tflite and the export's config, no SavedModel; then
  # saved_model,litert over it (an earlier export): both.
  _, encoder, _ = tiny_exports.build("encoder", vocab)
  encoder.save(str(tmp_path / "encoder.keras"))
  out = tmp_path / "export"
  config = ExportConfig(output_dir=str(out), init_checkpoint=str(tmp_path / "encoder.keras"),
                        vocab_file=resources.uncased_vocab_path(),
                        max_seq_length=tiny_exports.SEQ, format="litert")
  run_export(config)
  assert sorted(os.listdir(out)) == ["assets.extra", "model.tflite"]
  assert json.loads((out / "assets.extra" / "export_config.json").read_text())["format"] == "litert"
  assert json.loads((out / "assets.extra" / "export_info.json").read_text())["task"] == "encoder"
  module = exporter.build_serving_module(encoder, "encoder", vocab, tiny_exports.SEQ)
  _assert_same(module.serve(tf.constant(TEXTS[:3])), litert.load(str(out / "model.tflite")).serve(
      TEXTS[:3]))
  # predict.py --saved_model=<that directory> runs its model.tflite.
  run = subprocess.run([sys.executable, "scripts/predict.py", f"--saved_model={out}", "--text_a=hi"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert run.returncode == 0, run.stderr[-2000:]
  np.testing.assert_allclose(json.loads(run.stdout)["pooled_output"],
                             module.serve(tf.constant("hi"))["pooled_output"].numpy(), atol=1e-5)
  run_export(dataclasses.replace(config, format="saved_model,litert"))
  assert {"saved_model.pb", "model.tflite"} <= set(os.listdir(out))
  with pytest.raises(ConfigError, match="format='saved_model,onnx'"):
    dataclasses.replace(config, format="saved_model,onnx")
