"""load_vocab: the real vocabulary in id order, and user errors that name the file and line."""

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.text.vocab import check_vocabulary, load_vocab


def test_real_uncased_vocab():
  vocab = load_vocab(resources.uncased_vocab_path())
  assert len(vocab) == 30522
  assert vocab[0] == "[PAD]" and vocab[100] == "[UNK]" and vocab[101] == "[CLS]"
  assert vocab[102] == "[SEP]" and vocab[103] == "[MASK]" and vocab[7592] == "hello"


def test_strips_lines_and_allows_final_newline(tmp_path):
  path = tmp_path / "vocab.txt"
  path.write_bytes(b"[PAD]\r\n[UNK]\n  hello \n##lo\n")
  assert load_vocab(str(path)) == ["[PAD]", "[UNK]", "hello", "##lo"]


@pytest.mark.parametrize("content, message", [
    (b"", "vocabulary is empty"),
    (b"a\nb\na\n", ":3: duplicate token 'a' (first on line 1)"),
    (b"a\n\nb\n", ":2: empty token"),
    (b"a\n\xff\n", ":2: not valid UTF-8"),
])
def test_bad_files_name_file_and_line(tmp_path, content, message):
  path = tmp_path / "vocab.txt"
  path.write_bytes(content)
  with pytest.raises(UserError) as error:
    load_vocab(str(path))
  assert str(path) in str(error.value) and message in str(error.value)


def test_missing_file(tmp_path):
  with pytest.raises(UserError, match="vocabulary file not found"):
    load_vocab(str(tmp_path / "nope.txt"))


def test_check_vocabulary_decodes_bytes_and_rejects_duplicates():
  assert check_vocabulary([b"a", "b"]) == ["a", "b"]
  with pytest.raises(UserError, match="vocabulary:2: duplicate token 'a'"):
    check_vocabulary(["a", "a"])


def test_directory_is_named_as_such(tmp_path):
  with pytest.raises(UserError, match="is a directory; expected a vocabulary file"):
    load_vocab(str(tmp_path))
