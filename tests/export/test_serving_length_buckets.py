"""Length buckets in the text-in signatures: a call is as wide as its longest row's bucket, each
row of a batch runs at its own bucket, and the outputs on the real tokens equal those of fixed
max_seq_length padding, on real polarity sentences; serving_tokenized takes any length up to the
maximum. In memory (no SavedModel
written): the signatures are the functions export_task_model saves."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.export import export_task_model as exporter
from bert_keras.export.serving_options import ServingOptions
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_span_labeler import BertSpanLabeler
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.polarity import PolarityTask
from bert_keras.text import length_buckets
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from bert_keras.configs.tasks import get_task_config

SEQ = 64  # buckets 16, 24, 32, 48, 64
BUCKETS = (16, 24, 32, 48, 64)


@pytest.fixture(scope="module")
def tokenizer():
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


@pytest.fixture(scope="module")
def encoder(tokenizer):
  keras.utils.set_random_seed(1)
  return BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=tokenizer.vocab_size, num_layers=1))


@pytest.fixture(scope="module")
def sentences():
  examples = PolarityTask(get_task_config("polarity")).read_examples("", "dev")
  return [e.text_a for e in examples[:12]]


def _modules(kind, model, tokenizer, **kwargs):
  return [exporter.build_serving_module(model, kind, tokenizer, SEQ, **kwargs,
                                        options=ServingOptions(length_buckets=buckets))
          for buckets in (None, "fixed")]


def test_default_buckets_and_user_settings():
  assert length_buckets.default_buckets(128) == (16, 24, 32, 48, 64, 96, 128)
  assert length_buckets.default_buckets(384) == (16, 24, 32, 48, 64, 96, 128, 192, 256, 384)
  assert length_buckets.default_buckets(40) == (16, 24, 32, 40)  # 48 is past the maximum
  assert length_buckets.default_buckets(17) == (16, 17)
  assert length_buckets.default_buckets(12) == (12,)
  assert length_buckets.resolve_buckets("fixed", 128) == (128,)
  assert length_buckets.resolve_buckets("24,48", 128) == (24, 48, 128)
  for bad in ("32,16", "x", "8,256"):
    with pytest.raises(ValueError, match="length_buckets"):
      length_buckets.resolve_buckets(bad, 128)
  lengths = tf.constant([1, 16, 17, 33, 64, 200])
  np.testing.assert_array_equal(length_buckets.bucket_length(lengths, (16, 32, 64)),
                                [16, 16, 32, 64, 64, 64])


def test_encoder_outputs_on_real_tokens_equal_fixed_padding(encoder, tokenizer, sentences):
  bucketed, fixed = _modules("encoder", encoder, tokenizer)
  for batch in ([sentences[0]], sentences):
    a = bucketed.signatures()["serving_default"](text_a=tf.constant(batch))
    b = fixed.signatures()["serving_default"](text_a=tf.constant(batch))
    longest = int(b["input_mask"].numpy().sum(1).max())
    width = a["sequence_output"].shape[1]
    assert width == length_buckets.bucket_length(longest, BUCKETS)
    assert width < SEQ or len(batch) > 1  # one short sentence runs below max_seq_length
    assert b["sequence_output"].shape[1] == SEQ
    real = b["input_mask"].numpy()[:, :width] > 0
    np.testing.assert_array_equal(a["input_mask"], b["input_mask"][:, :width])
    assert not b["input_mask"].numpy()[:, width:].any()  # nothing real was cut
    np.testing.assert_allclose(a["pooled_output"], b["pooled_output"], atol=2e-5)
    np.testing.assert_allclose(a["sequence_output"].numpy()[real],
                               b["sequence_output"].numpy()[:, :width][real], atol=2e-5)
    np.testing.assert_allclose(a["encoder_outputs"].numpy()[:, 0][real],
                               b["encoder_outputs"].numpy()[:, 0, :width][real], atol=2e-5)


def test_each_row_of_a_batch_runs_at_its_own_bucket(encoder, tokenizer, sentences):
  bucketed, _ = _modules("encoder", encoder, tokenizer)
  serve = bucketed.signatures()["serving_default"]
  batch = sentences + [" ".join(sentences[:3])]  # a long row beside short ones
  out = serve(text_a=tf.constant(batch))
  lengths = out["input_mask"].numpy().sum(1)
  own = length_buckets.bucket_length(tf.constant(lengths), BUCKETS).numpy()
  width = out["sequence_output"].shape[1]
  assert len(set(own)) >= 2 and own.min() < width  # rows in more than one bucket
  for row, text in enumerate(batch):
    alone = serve(text_a=tf.constant([text]))  # one row: run at its own bucket
    n = int(lengths[row])
    np.testing.assert_allclose(out["pooled_output"][row], alone["pooled_output"][0], atol=2e-5)
    np.testing.assert_allclose(out["sequence_output"][row, :n], alone["sequence_output"][0, :n],
                               atol=2e-5)
    np.testing.assert_allclose(out["encoder_outputs"][row, :, :n],
                               alone["encoder_outputs"][0, :, :n], atol=2e-5)
    # Past its own bucket a row was not computed: zeros, where the whole call at `width` would
    # hold the encoder's outputs at padding.
    assert not out["sequence_output"].numpy()[row, own[row]:].any()
  assert out["sequence_output"].numpy()[lengths.argmax(), width - 1].any()


def test_every_saved_signature_gives_the_in_memory_answers(encoder, tokenizer, sentences,
                                                           tmp_path):
  # Every signature (text, text pair, tokenized and the `serve` forms) calls the one traced
  # per-row bucket function (traced once: bench/check_graphs.py).
  module, _ = _modules("encoder", encoder, tokenizer)
  batch = tf.constant(sentences[:4])
  before = module.signatures()["serving_text"](text_a=batch)
  exporter.save_serving_module(module, str(tmp_path / "export"))
  loaded = tf.saved_model.load(str(tmp_path / "export"))
  for name in ("serving_default", "serving_text"):
    after = loaded.signatures[name](text_a=batch)
    np.testing.assert_allclose(after["pooled_output"], before["pooled_output"], atol=1e-6)
  pair = loaded.signatures["serving_text_pair"](text_a=batch, text_b=tf.constant([""] * 4))
  np.testing.assert_allclose(pair["pooled_output"], before["pooled_output"], atol=1e-6)
  packed = module.to_bucket(module.packer([module.tokenize(batch)]))
  tokenized = loaded.signatures["serving_tokenized"](**packed)
  np.testing.assert_allclose(tokenized["pooled_output"], before["pooled_output"], atol=1e-6)


def test_classifier_and_pair_answers_equal_fixed_padding(encoder, tokenizer, sentences):
  model = BertClassifier(encoder, 2, dropout_rate=0.0)
  bucketed, fixed = _modules("classification", model, tokenizer, labels=["neg", "pos"])
  text_b = tf.constant(sentences[::-1])
  a = bucketed.signatures()["serving_text_pair"](text_a=tf.constant(sentences), text_b=text_b)
  b = fixed.signatures()["serving_text_pair"](text_a=tf.constant(sentences), text_b=text_b)
  np.testing.assert_allclose(a["probabilities"], b["probabilities"], atol=2e-5)
  assert bucketed.metadata()["length_buckets"] == list(BUCKETS)
  assert fixed.metadata()["length_buckets"] == [SEQ]


def test_serving_tokenized_takes_any_length_up_to_the_maximum(encoder, tokenizer, sentences):
  bucketed, _ = _modules("encoder", encoder, tokenizer)
  tokenized = bucketed.signatures()["serving_tokenized"]
  full = bucketed.packer([tf.cast(tokenizer.tokenize(tf.constant(sentences[:2])), tf.int32)])
  width = int(tf.reduce_max(tf.reduce_sum(full["input_mask"], 1))) + 1  # no bucket length
  assert width not in BUCKETS
  short = {name: value[:, :width] for name, value in full.items()}  # drops padding only
  out_short, out_full = tokenized(**short), tokenized(**full)
  assert out_short["sequence_output"].shape[1] == width
  np.testing.assert_allclose(out_short["pooled_output"], out_full["pooled_output"], atol=2e-5)
  too_long = {name: tf.concat([value, value[:, :1]], 1) for name, value in full.items()}
  with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds max_seq_length=64"):
    tokenized(**too_long)


def test_squad_and_ner_windows_pad_to_their_own_bucket(encoder, tokenizer, sentences):
  squad = dict(version_2=False, doc_stride=16, max_query_length=8, max_answer_length=6)
  bucketed, fixed = _modules("squad", BertSpanLabeler(encoder), tokenizer, extra=squad)
  question = tf.constant(["What was it?", "Who?"])
  context = tf.constant([sentences[0], " ".join(sentences)])  # one short, one long context
  for batch in (slice(0, 1), slice(0, 2)):
    a = bucketed.signatures()["serving_default"](question=question[batch],
                                                 context=context[batch])
    b = fixed.signatures()["serving_default"](question=question[batch], context=context[batch])
    for name in ("answer", "start", "end", "no_answer"):
      np.testing.assert_array_equal(a[name], b[name])
    np.testing.assert_allclose(a["score"], b["score"], atol=2e-5)

  labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
  keras.utils.set_random_seed(3)
  tagger = BertTokenClassifier(encoder, len(labels))
  bucketed, fixed = _modules("tagging", tagger, tokenizer, labels=labels,
                             extra={"doc_stride": 31})
  texts = tf.constant([sentences[1], " ".join(sentences[:4])])
  a = bucketed.signatures()["serving_default"](text=texts)
  b = fixed.signatures()["serving_default"](text=texts)
  assert int(b["num_entities"].numpy().sum()) > 0  # the comparison has entities to compare
  for name in ("entity_type", "entity_text", "entity_start", "entity_end", "num_entities"):
    np.testing.assert_array_equal(a[name], b[name])
