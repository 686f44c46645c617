"""Layer transfer (GPT-1 Figure 2 left), zero-shot scoring (Figure 2 right) and the LM windows."""

import numpy as np
import pytest

from bert_keras import resources
from bert_keras.gpt import lm_data
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLanguageModel
from studies.bert_gpt_ablation import zero_shot
from studies.bert_gpt_ablation.layer_transfer import transfer_layers

TINY = dict(vocab_size=300, hidden_size=16, num_layers=3, num_heads=2, intermediate_size=32,
            dropout_rate=0.0, attention_dropout_rate=0.0, max_position_embeddings=24)


@pytest.mark.parametrize("k", [0, 2, 3])
def test_transfer_first_k_layers(k):
  source, target = GPTDecoder(**TINY), GPTDecoder(**TINY)
  before = [w.copy() for w in target.get_weights()]
  before_position = [w.copy() for w in target.get_layer("position_embedding").get_weights()]
  transfer_layers(source, target, k)
  position = lambda model: model.get_layer("position_embedding").get_weights()
  assert not np.array_equal(position(source)[0], before_position[0])  # both random, not equal
  np.testing.assert_array_equal(target.token_embedding.get_weights()[0],
                                source.token_embedding.get_weights()[0])
  for a, b in zip(position(target), position(source)):
    np.testing.assert_array_equal(a, b)  # W_p is transferred with W_e, even at k = 0
  for i in range(3):
    same = all(np.array_equal(a, b) for a, b in zip(source.blocks[i].get_weights(),
                                                     target.blocks[i].get_weights()))
    assert same == (i < k), (i, k)
  assert any(not np.array_equal(a, b) for a, b in zip(before, target.get_weights()))
  with pytest.raises(ValueError, match="num_layers=4"):
    transfer_layers(source, target, 4)


def test_contiguous_windows():
  windows = lm_data.contiguous_windows([[1, 2, 3], [4, 5], [6, 7, 8, 9, 10]], 4)
  np.testing.assert_array_equal(windows["input_ids"], [[1, 2, 3, 4], [5, 6, 7, 8]])
  assert windows["input_mask"].sum() == 8
  with pytest.raises(Exception, match="fewer than one window"):
    lm_data.contiguous_windows([[1, 2]], 4)


def test_lee_background_reader_is_real_text():
  docs = lm_data.read_corpus("lee_background")
  assert len(docs) == 300 and all(docs)
  with pytest.raises(Exception, match="unknown corpus"):
    lm_data.read_corpus("books")


def _log_prob_by_hand(lm, tokenizer, sentence, continuation):
  """log P(continuation | <start> sentence): the log-softmax of each continuation piece at the
  position before it, summed (one unpadded row, no batching)."""
  cont = tokenizer.encode([continuation])[0]
  ids = [tokenizer.start_id] + tokenizer.encode([sentence])[0] + cont
  logits = np.asarray(lm({"input_word_ids": np.array([ids], np.int32),
                          "input_mask": np.ones((1, len(ids)), np.int32)})["lm_logits"])[0]
  logits = logits.astype(np.float64) - logits.max(-1, keepdims=True)
  log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
  first = len(ids) - len(cont)
  return sum(log_probs[first + j - 1, cont[j]] for j in range(len(cont)))


def test_zero_shot_scores_are_lm_log_probs():
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    texts = f.read().splitlines()
  tokenizer = GPTTokenizer(model_proto=train_bpe_model(texts, vocab_size=300))
  lm = GPTLanguageModel(GPTDecoder(**TINY))
  sentences = ["the film was great", "a dull and boring story", "it rained all week",
               "the minister said on tuesday"]
  scores = zero_shot.continuation_log_probs(lm, tokenizer, sentences, "very positive", 24)
  positive = [_log_prob_by_hand(lm, tokenizer, s, "very positive") for s in sentences]
  negative = [_log_prob_by_hand(lm, tokenizer, s, "very negative") for s in sentences]
  np.testing.assert_allclose(scores, positive, rtol=1e-4)
  assert np.all(scores < 0)
  # The prediction is 1 exactly where "very positive" is the likelier continuation; the margins
  # are far above float noise, so the comparison (not rounding) decides each sentence.
  assert min(abs(p - n) for p, n in zip(positive, negative)) > 1e-3
  predictions = zero_shot.zero_shot_sentiment(lm, tokenizer, sentences, 24)
  np.testing.assert_array_equal(predictions, [int(p > n) for p, n in zip(positive, negative)])
