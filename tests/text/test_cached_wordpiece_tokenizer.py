"""The data pipelines' pure-Python CachedWordpieceTokenizer gives exactly BertTokenizer's ids.

On every line of the embedded Wikipedia dump (raw wikitext and XML, which holds the text of every
sentence the pipeline makes of it), the hard texts of test_bert_tokenizer.py, cased and uncased, and
arbitrary text and bytes.
"""

import subprocess
import sys

import hypothesis
import hypothesis.strategies as st
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.data import cached_wordpiece_tokenizer as cwt
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.text.reference_tokenizer import ReferenceTokenizer
from bert_keras.text.vocab import load_vocab
from tests.text import corpora

# The fast path's boundaries: ASCII controls (deleted, joining words), non-ASCII Cc/Cf, U+FFFD and
# CJK (whole-text path), Unicode spaces and separators str.split() knows, accents, sigma, long words.
HARD_TEXTS = [
    "Hello world, this is BERT.", "Ünïcödé café naïve résumé Ångström İstanbul ǅemal Straße ﬁne",
    "中文字符测试，日本語のテキスト、한국어 텍스트 mixed中文text", "Wait… «quoted» — “curly” ¿qué? ¡sí! § ¶",
    "ctrl\x07bell\x1bescape\x7fdel\u200bzero\u200dwidth\ufeffbom\u00adsoft", "nul\x00in\x00side \ufffdrep",
    "tabs\tnew\nlines\r\nform\x0cfeed\x0bvt\u2028ls\u2029ps\u00a0nbsp\u3000ideographic\u1680ogham",
    "a" * 201 + " b", "x " + "é" * 201 + " y", "ΟΔΟΣ. ΣΑΣ ΌΣΟΣ'Σ Σ ΑΣ\u0301 ΑΣ\u0301Β ΑΣ\u200bΒ σοφός",
    "combining e\u0301 alone \u0301\u0308 Hangul 각", "".join(map(chr, range(128))),
    "mixed ascii café, and \x1c\x1d\x1e\x1f\x85 separators", "emoji 😀👍🏽 ❤️ \U00020000\uF900",
    "", " ", "\x00", "[CLS] literal [SEP] $5+3^2=`x`~{y}|<z>@#%&*_\\",
]


@pytest.fixture(scope="module")
def vocab():
  return load_vocab(resources.uncased_vocab_path())


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def pair(request, vocab):
  graph = BertTokenizer(vocabulary=vocab, lower_case=request.param)
  fn = tf.function(graph.tokenize, input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
  return fn, cwt.CachedWordpieceTokenizer(vocab, lower_case=request.param)


def _graph_ids(fn, texts):
  out = []
  for i in range(0, len(texts), 4096):
    out.extend(fn(tf.constant(texts[i:i + 4096], tf.string)).to_list())
  return out


def test_hard_texts(pair):
  fn, fast = pair
  texts = HARD_TEXTS + [t + " " + u for t in HARD_TEXTS for u in HARD_TEXTS[:6]]
  assert fast.encode(texts) == _graph_ids(fn, texts)
  assert fast.encode(texts) == _graph_ids(fn, texts)  # again, from the caches


def test_every_line_of_the_wikipedia_dump(pair, request):
  fn, fast = pair
  cased = "cased" in request.node.callspec.id and "uncased" not in request.node.callspec.id
  lines = corpora.wikipedia_lines(every=7 if cased else 1)  # uncased (the pipelines' default): all
  got = fast.encode(lines)
  want = _graph_ids(fn, lines)
  mismatches = [(line, a, b) for line, a, b in zip(lines, got, want) if a != b]
  assert len(lines) > 5000 and not mismatches, mismatches[:2]


def test_a_full_cache_keeps_the_ids(vocab, monkeypatch):
  # Far more words than entries: evicting never changes an id (the bound: bench/check_graphs.py).
  monkeypatch.setattr(cwt, "MAX_CACHE_ENTRIES", 50)
  fast = cwt.CachedWordpieceTokenizer(vocab)
  reference = ReferenceTokenizer(vocab)
  lines = corpora.wikipedia_lines(every=50)
  assert fast.encode(lines) == [reference.encode(line) for line in lines]


@hypothesis.settings(max_examples=100, deadline=None)
@hypothesis.given(st.lists(st.one_of(st.text(max_size=40), st.binary(max_size=40)), min_size=1, max_size=4))
def test_property_arbitrary_text_matches_reference(vocab, texts):
  # Reference equality here; the graph equals the reference on the same property (test_bert_tokenizer).
  fast = cwt.CachedWordpieceTokenizer(vocab)
  reference = ReferenceTokenizer(vocab)
  assert fast.encode(texts) == [reference.encode(t) for t in texts]
  assert fast.encode(texts) == [reference.encode(t) for t in texts]


def test_from_vocab_file_reads_the_vocabulary_without_tensorflow(tmp_path):
  """Workers build the tokenizer from a local vocab.txt; neither that nor load_vocab imports TF."""
  path = tmp_path / "vocab.txt"
  path.write_bytes(b"[PAD]\n[UNK]\n a \nb\n")
  code = ("import sys\n"
          "from bert_keras.data.cached_wordpiece_tokenizer import CachedWordpieceTokenizer\n"
          f"t = CachedWordpieceTokenizer.from_vocab_file({str(path)!r})\n"
          "assert t.vocabulary == ['[PAD]', '[UNK]', 'a', 'b'], t.vocabulary\n"
          "assert t.encode(['a b c']) == [[2, 3, 1]], t.encode(['a b c'])\n"
          "assert 'tensorflow' not in sys.modules\n")
  result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
  assert result.returncode == 0, result.stderr[-2000:]
