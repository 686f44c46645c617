"""NER export over texts longer than one window: the text-in SavedModel tags every window (doc
stride) and labels each piece from the window where it has the most context, so entities past the
first window are found with offsets into the whole text. The SavedModel is loaded in one fresh
`python -I` process that cannot import this project, and its entities must equal both the
in-memory serving module's and an independent Python path: the tiny model run window by window on
packed windows laid out by the SQuAD task's own code, the max-context rule of run_squad.py, and
seqeval's entity chunking."""

import json
import os

import keras
import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.export import export_task_model as exporter
from bert_keras.export.serving_options import ServingOptions
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.packing import pack_batch
from bert_keras.tasks.squad import check_is_max_context, doc_windows
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from tests.export.fresh_process import run_without_project

SEQ = 16  # 14 pieces a window
STRIDE = (SEQ - 2) // 2  # what build_finetuned picks by default
LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", ";", "ada", "love", "##lace",
         "met", "charles", "bab", "##bage", "in", "london", "zurich", "and", "東", "京", "are",
         "cities", "the", "engine", "##ers", "were", "walk", "##ing", "quick", "##ly"]
SENTENCE = ("Ada Lovelace met Charles Babbage in London. Zürich and 東京 are cities; "
            "the engineers were walking quickly. ")
TEXTS = [SENTENCE * 4, "Ada met Charles.", "", "Zürich,  東京 — " + SENTENCE * 3]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
  """(in-memory serving module, SavedModel dir written from build_finetuned, tokenizer)."""
  keras.utils.set_random_seed(7)
  tokenizer = BertTokenizer(vocabulary=VOCAB)
  config = get_model_config("bert_tiny", vocab_size=len(VOCAB), num_layers=2, hidden_size=32,
                            num_heads=2, intermediate_size=64)
  model = BertTokenClassifier(BertEncoder.from_model_config(config), len(LABELS))
  info = {"task": "conll2003", "label_names": LABELS, "max_seq_length": SEQ}
  path = exporter.save_serving_module(exporter.build_finetuned(model, info, tokenizer),
                                      str(tmp_path_factory.mktemp("ner") / "export"))
  module = exporter.build_serving_module(model, "tagging", tokenizer, SEQ, labels=LABELS,
                                         extra={"doc_stride": STRIDE})
  return module, path, tokenizer


_LOADER = """
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    path, calls = pickle.load(open(sys.argv[1], "rb"))
    loaded = tf.saved_model.load(path)
    outputs = [{k: v.numpy() for k, v in loaded.serve(tf.constant(text)).items()}
               for text in calls]
    default = loaded.signatures["serving_default"]
    outputs.append({k: v.numpy() for k, v in default(text=tf.constant(calls[0])).items()})
    result = dict(outputs=outputs, doc_stride=int(loaded.doc_stride.numpy()),
                  project=project_modules())
    pickle.dump(result, open(sys.argv[2], "wb"))
"""


@pytest.fixture(scope="module")
def loaded(setup, tmp_path_factory):
  _, path, _ = setup
  return run_without_project(_LOADER, (path, [TEXTS, TEXTS[0]]),
                             tmp_path_factory.mktemp("fresh_ner"))


def _window_by_window(module, tokenizer, texts, owner="max_context"):
  """Entities (type, start char, end char) per text from the Keras model run on each window.

  owner: "max_context" (run_squad.py's rule) or "first" (the first window holding the piece: a
  wrong rule, to show the test tells them apart)."""
  from seqeval.metrics.sequence_labeling import get_entities

  ids, begins, ends = (t.to_list() for t in tokenizer.tokenize_with_offsets(tf.constant(texts)))
  result = []
  for row, text in enumerate(texts):
    spans = doc_windows(len(ids[row]), SEQ - 2, STRIDE)
    packed = pack_batch([ids[row][s:s + n] for s, n in spans], None, SEQ, tokenizer.cls_id,
                        tokenizer.sep_id, tokenizer.pad_id)
    tags = module.model(packed, training=False)["logits"].numpy().argmax(-1)  # (windows, seq)
    data = text.encode("utf-8")
    words = []  # [tag, begin byte, end byte] per word, tagged at its first piece
    for p, (piece, b, e) in enumerate(zip(ids[row], begins[row], ends[row])):
      if p and tokenizer.id_to_token(piece).startswith("##"):
        words[-1][2] = e
        continue
      holders = [w for w, (s, n) in enumerate(spans) if s <= p < s + n]
      w = holders[0] if owner == "first" else next(
          w for w in holders if check_is_max_context(spans, w, p))
      words.append([LABELS[tags[w, p - spans[w][0] + 1]], b, e])
    result.append([(kind, len(data[:words[first][1]].decode()), len(data[:words[last][2]].decode()))
                   for kind, first, last in get_entities([w[0] for w in words])])
  return result


def _entities(out, row=None):
  """[(type, start, end)] of one row of a serve output (row None: a scalar call)."""
  pick = (lambda x: x) if row is None else (lambda x: x[row])
  n = int(pick(out["num_entities"]))
  return [(pick(out["entity_type"])[k].decode(), int(pick(out["entity_start"])[k]),
           int(pick(out["entity_end"])[k])) for k in range(n)]


@pytest.mark.slow
def test_long_text_entities_match_window_by_window_model(setup, loaded):
  module, path, tokenizer = setup
  assert loaded["project"] == []
  assert loaded["doc_stride"] == STRIDE
  with open(os.path.join(path, "assets.extra", exporter.EXPORT_INFO), encoding="utf-8") as f:
    assert json.load(f)["doc_stride"] == STRIDE

  pieces = tokenizer.tokenize(tf.constant(TEXTS[:1])).row_lengths().numpy()[0]
  assert pieces > SEQ - 2 + 3 * STRIDE  # more than 3 windows
  expected = _window_by_window(module, tokenizer, TEXTS)
  in_memory = {k: v.numpy() for k, v in module.serve(tf.constant(TEXTS)).items()}
  batched, single, default = loaded["outputs"]
  for row, text in enumerate(TEXTS):
    got = _entities(batched, row)
    assert got == expected[row], row
    assert got == _entities(in_memory, row), row
    for k, (_, start, end) in enumerate(got):
      assert batched["entity_text"][row, k].decode() == text[start:end]
  assert _entities(single) == expected[0] == _entities(default, 0)

  # Entities past the first window are found; the rule that picks the window matters here.
  _, _, ends = tokenizer.tokenize_with_offsets(tf.constant(TEXTS[:1]))
  first_window_end = len(TEXTS[0].encode()[:int(ends.to_list()[0][SEQ - 3])].decode())
  assert any(start >= first_window_end for _, start, _ in expected[0])
  assert _window_by_window(module, tokenizer, TEXTS, owner="first") != expected


def test_stride_is_checked(setup):
  module, _, tokenizer = setup
  with pytest.raises(ValueError, match="doc_stride=15"):
    exporter.build_serving_module(module.model, "tagging", tokenizer, SEQ, labels=LABELS,
                                  extra={"doc_stride": SEQ - 1})
  with pytest.raises(UserError, match="doc_stride=15"):
    exporter.build_finetuned(module.model, {"label_names": LABELS, "max_seq_length": SEQ},
                             tokenizer, ServingOptions(doc_stride=SEQ - 1))
