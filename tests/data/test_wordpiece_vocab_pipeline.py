"""Learning a WordPiece vocab.txt with Beam from a real corpus (Lee news documents)."""

import json
import os

import pytest

from bert_keras import resources
from bert_keras.data.beam_args import VOCAB_RECORD_KEYS
from bert_keras.data.wordpiece_vocab_pipeline import learn_vocabulary, parse_args, reserved_tokens, run
from bert_keras.errors import UserError
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.text.vocab import load_vocab

IN_MEMORY = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]


def _learn(out, *extra):
  return run([f"--input_files={resources.lee_background_path()}", "--input_format=lines", f"--output_dir={out}",
              "--vocab_size=1500", "--num_unused=10",
              "--max_input_words=2500", "--num_iterations=1"] + list(extra) + IN_MEMORY)


@pytest.fixture(scope="module")
def uncased(tmp_path_factory):
  return _learn(str(tmp_path_factory.mktemp("vocab")))


def test_layout_size_and_use(uncased):
  vocab = load_vocab(uncased)
  assert vocab[:15] == reserved_tokens(10) and vocab[0] == "[PAD]" and vocab[11:15] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
  assert 1300 <= len(vocab) <= 1700  # the learner's slack around vocab_size
  assert any(t.startswith("##") for t in vocab) and all(t == t.lower() for t in vocab[15:])
  assert {"the", "government", "."} <= set(vocab)
  tokenizer = BertTokenizer(vocab_path=uncased)
  ids = tokenizer.encode(["The Australian government said on Tuesday."])[0]
  assert tokenizer.unk_id not in ids and len(ids) >= 6
  config = json.load(open(os.path.join(os.path.dirname(uncased), "learn_vocab_config.json")))
  assert config["vocab_size"] == 1500 and config["vocab_tokens"] == len(vocab)
  # The resolved config beside vocab.txt is a --config_file of the same run.
  again, _ = parse_args([f"--config_file={os.path.dirname(uncased)}/learn_vocab_config.json"])
  assert {k: v for k, v in vars(again).items() if k != "config_file"} == {
      k: v for k, v in config.items() if k not in VOCAB_RECORD_KEYS}


def _word_counts(lower_case):
  import collections
  from bert_keras.text.reference_tokenizer import ReferenceTokenizer
  tokenizer = ReferenceTokenizer(["[UNK]"], lower_case=lower_case)
  counts = collections.Counter()
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    for line in list(f)[:100]:
      counts.update(tokenizer.basic_tokenize(line))
  return counts.most_common(800)


def test_learning_is_order_independent_and_cased_keeps_case():
  counts = _word_counts(lower_case=False)
  cased = learn_vocabulary(counts, 600, 5, num_iterations=1)
  assert cased == learn_vocabulary(list(reversed(counts)), 600, 5, num_iterations=1)
  assert "The" in cased and any(t != t.lower() for t in cased[9:])


def test_learn_vocabulary_errors_and_args():
  with pytest.raises(UserError, match="no words in the corpus c/.*txt: "):
    learn_vocabulary([], 100, 5, input_files="c/*.txt")
  with pytest.raises(UserError, match="vocab_size=8"):
    learn_vocabulary([("a", 3)], 8, 5)
  known, beam_args = parse_args(["--output_dir=o", "--runner=DataflowRunner", "--project=p"])
  assert known.vocab_size == 30522 and beam_args == ["--runner=DataflowRunner", "--project=p"]


def test_a_vocab_size_without_room_fails_before_reading(tmp_path):
  """Checked in the main process: a worker's error would reach the user as a RuntimeError."""
  out = tmp_path / "out"
  missing = tmp_path / "none.txt"  # never read: the check comes first
  for size in ("-5", "15"):
    with pytest.raises(UserError, match=f"vocab_size={size} leaves no room after 15 reserved tokens"):
      run([f"--input_files={missing}", "--input_format=lines", f"--output_dir={out}",
           f"--vocab_size={size}", "--num_unused=10"] + IN_MEMORY)
  assert not out.exists()


def test_words_counted_as_the_basic_tokenizer_does(tmp_path, monkeypatch):
  """Words counted per bundle, by whitespace word where that is exact, flushed every few words:
  the vocabulary of the exact counts of the original basic tokenizer's words."""
  import collections
  from bert_keras.data import wordpiece_vocab_pipeline
  from bert_keras.text.reference_tokenizer import ReferenceTokenizer
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    lines = list(f)[:40] + ["\n"]  # one sentence a line; two documents
  lines += ["Ça coûte 5€, naïve café\u00adcrème.\n", "東京 tower\x07bell, 日本語!\n"] + 20 * [
      "qz\x1fqz tab\tsep\u200bzero\n"]  # one word to the original: "qzqz", "sepzero"
  corpus = tmp_path / "c.txt"
  corpus.write_text("".join(lines), encoding="utf-8")
  monkeypatch.setattr(wordpiece_vocab_pipeline, "MAX_COUNTED_WORDS", 50)
  path = run([f"--input_files={corpus}", "--input_format=bert_text", f"--output_dir={tmp_path / 'out'}",
              "--vocab_size=400", "--num_unused=3", "--num_iterations=2"] + IN_MEMORY)
  tokenizer = ReferenceTokenizer(["[UNK]"])
  counts = collections.Counter(w for line in lines for w in tokenizer.basic_tokenize(line))
  assert load_vocab(path) == learn_vocabulary(counts.items(), 400, 3, num_iterations=2)
