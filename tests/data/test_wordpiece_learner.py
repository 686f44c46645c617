"""The faster WordPiece learner gives tensorflow_text's vocabulary (Lee news word counts)."""

import collections

import pytest
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as original

from bert_keras import resources
from bert_keras.data import wordpiece_learner
from bert_keras.text.reference_tokenizer import ReferenceTokenizer


@pytest.fixture(scope="module")
def word_counts():
  tokenizer = ReferenceTokenizer(["[UNK]"], lower_case=False)
  counts = collections.Counter()
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    for line in list(f)[:60]:
      counts.update(tokenizer.basic_tokenize(line))
  # Words the basic tokenizer never makes, which the original still keeps apart: "##" inside a word.
  counts.update({"##in": 7, "a##b": 3, "x" * 60: 9})
  return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


@pytest.mark.parametrize("vocab_size,lower,iterations,max_words,max_chars", [
    (400, 1, 3, 100_000, 1000), (900, 2, 1, 700, 1000), (300, 1, 2, 100_000, 40)])
def test_same_vocabulary_as_the_original(word_counts, vocab_size, lower, iterations, max_words, max_chars):
  args = (word_counts, vocab_size, ["[PAD]", "[UNK]", "the"], word_counts[0][1], lower, iterations,
          max_words, 50, max_chars)
  assert wordpiece_learner.learn(*args) == original.learn(*args, include_joiner_token=True, joiner="##")


@pytest.mark.parametrize("counts,upper,lower", [
    ([("##x", 50), ("ax", 5), ("bx", 20), ("c", 60), ("b", 30)], 60, 1),  # "##x": a word, "x" in one
    ([("abc", 1), ("abd", 0)], 5, 0)])  # threshold 0
def test_edge_cases_as_the_original(counts, upper, lower):
  args = (counts, 20, ["[UNK]"], upper, lower, 1, 100, 50, 100)
  assert wordpiece_learner.learn(*args) == original.learn(*args, include_joiner_token=True, joiner="##")
