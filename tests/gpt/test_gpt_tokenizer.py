import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_input_transform import GPTInputTransform
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer


@pytest.fixture(scope="module")
def tokenizer():
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    texts = f.read().splitlines()
  return GPTTokenizer(model_proto=train_bpe_model(texts, vocab_size=1000))


def test_special_tokens_and_vocab(tokenizer):
  assert tokenizer.vocab_size == 1000
  assert (tokenizer.pad_id, tokenizer.unk_id) == (0, 1)
  assert (tokenizer.start_id, tokenizer.delimiter_id, tokenizer.extract_id) == (2, 3, 4)
  assert tokenizer.id_to_token(tokenizer.extract_id) == "<extract>"
  # BPE merges are learned: frequent words of the news corpus are single pieces.
  assert len(tokenizer.encode(["the government"])[0]) == 2


def test_in_graph_matches_python_and_lowercases(tokenizer):
  texts = ["The Government said on Tuesday.", "Ünïcödé and <extract> text", ""]
  ragged = tokenizer.tokenize(tf.constant(texts))
  assert ragged.to_list() == tokenizer.encode(texts)
  assert tokenizer.encode(["THE"]) == tokenizer.encode(["the"])
  # A literal special-token string in user text never becomes the special id.
  assert tokenizer.extract_id not in ragged.to_list()[1]
  assert tokenizer.decode(tokenizer.encode(["the government said"])[0]) == "the government said"


def test_config_and_file_round_trip(tokenizer, tmp_path):
  clone = GPTTokenizer.from_config(tokenizer.get_config())
  assert clone.encode(["police said"]) == tokenizer.encode(["police said"])
  path = os.path.join(str(tmp_path), "bpe.model")
  tokenizer.save_model(path)
  assert GPTTokenizer(model_path=path).vocabulary == tokenizer.vocabulary


def test_errors(tmp_path):
  with pytest.raises(UserError, match="no such SentencePiece model file"):
    GPTTokenizer(model_path=str(tmp_path / "missing.model"))
  bad = tmp_path / "bad.model"
  bad.write_bytes(b"not a model")
  with pytest.raises(UserError, match="bad.model: not a SentencePiece model"):
    GPTTokenizer(model_path=str(bad))
  with pytest.raises(UserError, match="no text"):
    train_bpe_model(["", "  "], vocab_size=100)
  with pytest.raises(UserError, match="vocab_size=50000"):
    train_bpe_model(["a few words only"], vocab_size=50000)


def test_saved_model_tokenizes_raw_text(tokenizer, tmp_path):
  """The export path: strings in, packed GPT inputs out, no files beside the SavedModel."""
  transform = GPTInputTransform(16, tokenizer.start_id, tokenizer.delimiter_id,
                                tokenizer.extract_id, tokenizer.pad_id)
  module = tf.Module()
  module.tokenizer, module.transform = tokenizer, transform

  @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string)])
  def serve(premise, hypothesis):
    return transform.entailment(tokenizer.tokenize(premise), tokenizer.tokenize(hypothesis))

  module.serve = serve
  path = str(tmp_path / "saved")
  tf.saved_model.save(module, path)
  restored = tf.saved_model.load(path)
  out = restored.serve(tf.constant(["the police said"]), tf.constant(["officers spoke"]))
  a, b = tokenizer.encode(["the police said", "officers spoke"])
  expected = [2] + a + [3] + b + [4]
  np.testing.assert_array_equal(out["input_word_ids"][0, :len(expected)], expected)
  assert int(out["input_mask"][0].numpy().sum()) == len(expected)
