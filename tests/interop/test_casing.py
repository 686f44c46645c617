import pytest

from bert_keras import resources
from bert_keras.interop.casing import casing_from_vocab, check_tokenizer_casing


def test_uncased_checkpoint_with_cased_tokenizer_warns():
  with pytest.warns(UserWarning, match="uncased checkpoint but the tokenizer is cased"):
    message = check_tokenizer_casing(True, False, "uncased_L-12_H-768_A-12")
  assert "uncased_L-12_H-768_A-12" in message


def test_cased_checkpoint_with_lower_casing_tokenizer_warns():
  class Tokenizer:  # anything with a lower_case attribute, like BertTokenizer
    lower_case = True
  with pytest.warns(UserWarning, match="cased checkpoint but the tokenizer lower-cases"):
    assert check_tokenizer_casing(False, Tokenizer(), "cased_L-12") is not None


@pytest.mark.parametrize("checkpoint,tokenizer", [(True, True), (False, False), (None, True),
                                                  (True, None)])
def test_agreement_or_unknown_casing_is_silent(checkpoint, tokenizer, recwarn):
  assert check_tokenizer_casing(checkpoint, tokenizer) is None
  assert not recwarn.list


def test_casing_from_vocab(tmp_path):
  assert casing_from_vocab(resources.uncased_vocab_path()) is True  # the real uncased vocabulary
  cased = tmp_path / "vocab.txt"
  cased.write_text("\n".join(["[PAD]", "[UNK]", "The", "the", "Paris", "##s", "London"]) + "\n")
  assert casing_from_vocab(str(cased)) is False
  assert casing_from_vocab(str(tmp_path / "missing.txt")) is None
