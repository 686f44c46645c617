"""Property tests of exported serving signatures: arbitrary unicode, empty, huge and invalid UTF-8
strings go through the text-in SavedModels (loaded back with tf.saved_model.load) without crashing
and come back with outputs of the right shapes and finite scores.

One tiny model per kind is exported once per module: a sentence-pair classifier, a SQuAD span
labeler and a token tagger. The tokenizer and packer alone are fuzzed in tests/text.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bert_keras.export import export_task_model as exporter
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_span_labeler import BertSpanLabeler
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from tests.reliability import bad_inputs as B

SEQ = 24
LABELS = ["neg", "pos"]
TAGS = ["O", "B-PER", "I-PER"]
FUZZ = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

HUGE = "the film was good " * 50_000  # 900 KB, ~200k words: truncated to SEQ pieces
INVALID_UTF8 = [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"ok \x80 then", b"\xf4\x90\x80\x80"]
# Unicode text (lone surrogates included, as bytes with surrogatepass), raw bytes, or edge cases.
one_string = st.one_of(
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
    st.sampled_from([b"", b" ", b"\x00", "\u200b\ufeff\u0301".encode(), HUGE.encode()] + INVALID_UTF8),
    st.lists(st.sampled_from(B.VOCAB + ["##", "UNKNOWNWORD", "\t"]), max_size=60).map(
        lambda words: " ".join(words).encode()),
)
batches = st.lists(one_string, min_size=1, max_size=4)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
  """kind -> loaded SavedModel (tf.saved_model.load of what export_task_model wrote)."""
  keras.utils.set_random_seed(0)
  root = tmp_path_factory.mktemp("serving")
  tokenizer = BertTokenizer(vocab_path=B.write_vocab(str(root)))
  config = get_model_config("bert_tiny", vocab_size=len(B.VOCAB), hidden_size=16, num_layers=1,
                            num_heads=2, intermediate_size=32, max_position_embeddings=SEQ)
  encoder = lambda: BertEncoder.from_model_config(config)
  models = {
      "classification": (BertClassifier(encoder(), len(LABELS)),
                         dict(labels=LABELS, extra={"pair": True})),
      "squad": (BertSpanLabeler(encoder()),
                dict(extra=dict(version_2=True, null_score_diff_threshold=0.0, doc_stride=8,
                                max_query_length=6, max_answer_length=5, n_best_size=5))),
      "tagging": (BertTokenClassifier(encoder(), len(TAGS)), dict(labels=TAGS)),
  }
  loaded = {}
  for kind, (model, options) in models.items():
    path = exporter.export_task_model(model, kind, tokenizer, str(root / kind), SEQ,
                                      task=f"fuzz_{kind}", **options)
    loaded[kind] = tf.saved_model.load(path)
  return loaded


def _call(loaded, **strings):
  signature = loaded.signatures["serving_default"]
  return {k: v.numpy() for k, v in signature(**{k: tf.constant(v, tf.string)
                                                 for k, v in strings.items()}).items()}


def _finite(outputs):
  for name, value in outputs.items():
    if value.dtype.kind == "f":
      assert np.all(np.isfinite(value)), f"{name} has non-finite values: {value}"


@FUZZ
@given(text_a=batches, data=st.data())
@example(text_a=[HUGE.encode()], data=None)
@example(text_a=INVALID_UTF8, data=None)
@example(text_a=[b""], data=None)
def test_classifier(served, text_a, data):
  text_b = (data.draw(st.lists(one_string, min_size=len(text_a), max_size=len(text_a)))
            if data is not None else [b""] * len(text_a))
  outputs = _call(served["classification"], text_a=text_a, text_b=text_b)
  n = len(text_a)
  assert outputs["probabilities"].shape == (n, len(LABELS))
  assert outputs["label_id"].shape == (n,)
  np.testing.assert_allclose(outputs["probabilities"].sum(-1), 1.0, rtol=1e-5)
  assert set(outputs["label"].tolist()) <= {label.encode() for label in LABELS}
  _finite(outputs)


@settings(FUZZ, max_examples=15)
@given(question=batches, data=st.data())
@example(question=[b"who?"], data=None)
@example(question=INVALID_UTF8, data=None)
def test_squad(served, question, data):
  context = (data.draw(st.lists(one_string, min_size=len(question), max_size=len(question)))
             if data is not None else [HUGE.encode()] * len(question))
  outputs = _call(served["squad"], question=question, context=context)
  n = len(question)
  for value in outputs.values():
    assert value.shape[0] == n
  assert outputs["answer"].shape == outputs["score"].shape == outputs["no_answer"].shape == (n,)
  for value in outputs.values():
    assert not (value.dtype.kind == "f" and np.isnan(value).any()), outputs
  # No candidate span at all (e.g. an empty passage) scores -inf: that must be a no-answer.
  no_span = np.isneginf(outputs["score"])
  assert np.all(outputs["no_answer"][no_span]) and all(a == b"" for a in outputs["answer"][no_span])
  assert np.all(outputs["start"][outputs["no_answer"]] == -1)


@FUZZ
@given(text=batches)
@example(text=[HUGE.encode(), b""])
@example(text=INVALID_UTF8)
def test_tagger(served, text):
  outputs = _call(served["tagging"], text=text)
  n = len(text)
  for value in outputs.values():
    assert value.shape[0] == n
  if "num_entities" in outputs:
    assert np.all(outputs["num_entities"] >= 0)
  _finite(outputs)


@FUZZ
@given(ids=st.lists(st.integers(-5, len(B.VOCAB) + 5), min_size=SEQ, max_size=SEQ))
def test_tokenized_signature_rejects_or_serves_out_of_range_ids(served, ids):
  """serving_tokenized with any int32 ids: in-vocabulary ids give finite logits of the right shape;
  out-of-range ids either give finite outputs or an InvalidArgumentError, never a crash."""
  signature = served["classification"].signatures["serving_tokenized"]
  word_ids = tf.constant([ids], tf.int32)
  try:
    outputs = signature(input_word_ids=word_ids, input_mask=tf.ones_like(word_ids),
                        input_type_ids=tf.zeros_like(word_ids))
  except tf.errors.InvalidArgumentError:
    assert any(not 0 <= i < len(B.VOCAB) for i in ids)
    return
  assert outputs["probabilities"].shape == (1, len(LABELS))
  if all(0 <= i < len(B.VOCAB) for i in ids):
    _finite({k: v.numpy() for k, v in outputs.items()})
