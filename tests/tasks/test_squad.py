"""SQuAD reader, windows, features and post-processing on small files in the official layout."""

import json

import numpy as np
import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks import squad
from bert_keras.tasks.squad import SquadV1Task, SquadV2Task
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.tasks import get_task_config

from . import task_fixtures as fx

@pytest.fixture(scope="module")
def tokenizer():
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


def test_split_passage_keeps_char_offsets():
  words, char_to_word, starts = squad.split_passage("  ab c\u202fd\ne ")
  assert words == ["ab", "c", "d", "e"]
  assert starts == [2, 5, 7, 9]
  assert char_to_word[:3] == [-1, -1, 0]


def test_reader_word_positions_and_errors(tmp_path):
  data_dir = fx.write_json(tmp_path, "train-v1.1.json", fx.SQUAD_V1)
  task = SquadV1Task(get_task_config("squad_v1"))
  examples = task.read_examples(data_dir, "train")
  assert [e.qas_id for e in examples] == ["q1", "q2", "q3", "q4"]
  q1 = examples[0]
  assert q1.doc_tokens[q1.start_position] == "(1867–1934)"
  q3 = examples[2]
  assert q3.doc_tokens[q3.start_position] == "Zürich." and q3.end_position == len(q3.doc_tokens) - 1
  bad = json.loads(json.dumps(fx.SQUAD_V1))
  bad["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 500
  fx.write_json(tmp_path, "train-v1.1.json", bad)
  with pytest.raises(UserError, match=r"paragraphs\[0\]\.qas\[0\].*answer_start=500"):
    task.read_examples(data_dir, "train")
  with pytest.raises(UserError, match="dev-v1.1.json: no such file"):
    task.read_examples(data_dir, "dev")


def test_doc_windows_and_max_context():
  spans = squad.doc_windows(10, 4, 3)
  assert spans == [(0, 4), (3, 4), (6, 4)]
  # Token 4 sits in windows 0? no: window 1 covers 3..6 (left 1, right 2), window 2 does not.
  assert squad.check_is_max_context(spans, 1, 4)
  # Token 6: window 1 (left 3, right 0) vs window 2 (left 0, right 3): tie -> the first wins.
  assert squad.check_is_max_context(spans, 1, 6) and not squad.check_is_max_context(spans, 2, 6)
  assert squad.doc_windows(0, 4, 3) == [(0, 0)]


def test_features_label_the_answer_pieces(tmp_path, tokenizer):
  data_dir = fx.write_json(tmp_path, "train-v1.1.json", fx.SQUAD_V1)
  task = SquadV1Task(get_task_config("squad_v1", max_seq_length=48, doc_stride=16,
                                     max_query_length=12))
  examples = task.read_examples(data_dir, "train")
  features = task.make_features(examples, tokenizer, training=True)
  ids = features.inputs["input_word_ids"]
  starts, ends = features.labels["start_logits"], features.labels["end_logits"]
  per_example = [sum(m["example_index"] == i for m in features.meta) for i in range(4)]
  assert per_example[2] > 1  # the long passage needs several windows
  for f, m in enumerate(features.meta):
    answer = tokenizer.encode([examples[m["example_index"]].orig_answer_text])[0]
    if starts[f] == 0:
      assert ends[f] == 0
      continue
    # The label covers exactly the answer's pieces ("1867" inside "(1867–1934)").
    assert list(ids[f][starts[f]:ends[f] + 1]) == answer
  labelled = {features.meta[f]["example_index"] for f in range(len(features)) if starts[f] > 0}
  assert labelled == {0, 1, 2, 3}


def _one_hot_logits(features, f, start, end):
  s = np.full(features.inputs["input_word_ids"].shape, -5.0, np.float32)
  e = s.copy()
  s[f, start], e[f, end] = 5.0, 5.0
  return s, e


def test_postprocess_maps_back_to_passage_characters(tmp_path, tokenizer):
  data_dir = fx.write_json(tmp_path, "dev-v1.1.json", fx.SQUAD_V1)
  task = SquadV1Task(get_task_config("squad_v1", max_seq_length=48, doc_stride=16,
                                     max_query_length=12))
  examples = task.read_examples(data_dir, "dev")
  features = task.make_features(examples, tokenizer, training=False)
  ids = features.inputs["input_word_ids"]
  # q1: point at the piece "1867" inside "(1867–1934)": the answer is trimmed to "1867".
  f0 = 0
  piece = tokenizer.token_to_id("1867")
  pos = int(np.where(ids[f0] == piece)[0][0])
  start, end = _one_hot_logits(features, f0, pos, pos)
  # q2: point from "cafe" to the final "." so the passage's own double spaces and accent return.
  f1 = next(f for f, m in enumerate(features.meta) if m["example_index"] == 1)
  cafe = int(np.where(ids[f1] == tokenizer.token_to_id("cafe"))[0][0])
  last = features.meta[f1]["length"] - 2
  start[f1, cafe], end[f1, last] = 5.0, 5.0
  out = task.postprocess(examples, features, {"start_logits": start, "end_logits": end})
  assert out["predictions"]["q1"] == "1867"
  assert out["predictions"]["q2"] == "Café  au lait."
  assert out["nbest"]["q2"][0]["answer_start"] == fx.CAFE
  assert len(out["nbest"]["q1"]) <= 20
  metrics = task.evaluate(examples, out)
  # q1 and q2 exact (q2 matches both golds after normalisation); q3 and q4, all of whose logits tie,
  # get one-piece spans ("fill", "Anti") that share no token with their answers.
  assert metrics == {"exact_match": 50.0, "f1": 50.0}


def test_postprocess_rejects_reversed_and_too_long_spans(tmp_path, tokenizer):
  data_dir = fx.write_json(tmp_path, "dev-v1.1.json", fx.SQUAD_V1)
  task = SquadV1Task(get_task_config("squad_v1", max_seq_length=48, doc_stride=16,
                                     max_query_length=12, max_answer_length=2, n_best_size=5))
  examples = task.read_examples(data_dir, "dev")[:1]
  features = task.make_features(examples, tokenizer, training=False)
  length = features.meta[0]["length"]
  start = np.full((1, 48), -5.0, np.float32)
  end = start.copy()
  # Highest start after highest end (invalid), and a long span; the best valid one must win.
  first_doc = min(features.meta[0]["token_to_orig"])
  start[0, first_doc + 5], end[0, first_doc + 1] = 9.0, 9.0
  start[0, first_doc], end[0, first_doc + 4] = 8.0, 8.0  # 5 tokens > max_answer_length 2
  start[0, first_doc + 2], end[0, first_doc + 3] = 7.0, 7.0
  out = task.postprocess(examples, features, {"start_logits": start, "end_logits": end})
  best = out["nbest"]["q1"][0]
  assert best["start_logit"] + best["end_logit"] == pytest.approx(max(
      start[0, i] + end[0, j] for i in range(first_doc, length - 1)
      for j in range(i, min(i + 2, length - 1))))


def test_squad_v2_null_score_and_threshold(tmp_path, tokenizer):
  data_dir = fx.write_json(tmp_path, "dev-v2.0.json", fx.SQUAD_V2)
  task = SquadV2Task(get_task_config("squad_v2", max_seq_length=32, max_query_length=10))
  examples = task.read_examples(data_dir, "dev")
  assert [e.is_impossible for e in examples] == [False, True]
  features = task.make_features(examples, tokenizer, training=False)
  ids = features.inputs["input_word_ids"]
  paris = tokenizer.token_to_id("paris")
  start = np.zeros(ids.shape, np.float32)
  end = np.zeros(ids.shape, np.float32)
  for f in range(2):
    p = int(np.where(ids[f] == paris)[0][0])
    start[f, p] = end[f, p] = 3.0  # best span score 6
  start[0, 0] = end[0, 0] = 1.0  # s_null = 2 -> diff -4: answer
  start[1, 0] = end[1, 0] = 2.5  # s_null = 5 -> diff -1: still "Paris" at threshold 0
  out = task.postprocess(examples, features, {"start_logits": start, "end_logits": end})
  assert out["null_odds"] == pytest.approx({"a1": -4.0, "a2": -1.0})
  assert out["predictions"] == {"a1": "Paris", "a2": "Paris"}
  metrics = task.evaluate(examples, out)
  assert metrics["exact"] == pytest.approx(50.0)
  assert metrics["HasAns_exact"] == pytest.approx(100.0) and metrics["NoAns_exact"] == 0.0
  # A threshold between -4 and -1 answers a1 and abstains on a2: both right.
  assert metrics["best_f1"] == pytest.approx(100.0)
  assert metrics["best_f1_thresh"] == pytest.approx(-4.0)
  info = task.task_info(metrics)
  assert info["null_score_diff_threshold"] == pytest.approx(-4.0)


def test_squad_v2_training_labels_point_at_cls(tmp_path, tokenizer):
  data_dir = fx.write_json(tmp_path, "train-v2.0.json", fx.SQUAD_V2)
  task = SquadV2Task(get_task_config("squad_v2", max_seq_length=32, max_query_length=10))
  features = task.make_features(task.read_examples(data_dir, "train"), tokenizer, training=True)
  assert features.labels["start_logits"][1] == 0 and features.labels["end_logits"][1] == 0
  assert features.labels["start_logits"][0] > 0


# --- Answers not at their answer_start -----------------------------------------------------------

def _squad_file(tmp_path, starts, context="the film was very good"):
  """One question per start, all answering "good" (at 18); the file named as a train split."""
  qas = [{"id": f"q{i}", "question": "how?", "answers": [{"text": "good", "answer_start": s}]}
         for i, s in enumerate(starts)]
  return fx.write_json(tmp_path, "train-v1.1.json", {"version": "1.1", "data": [
      {"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]})


def test_answers_shifted_by_one_are_refused(tmp_path):
  """Before: start 17 (the space before "good") was read as the span "very good", one word wider."""
  data_dir = _squad_file(tmp_path, [17, 17, 17, 18])
  task = SquadV1Task(get_task_config("squad_v1"))
  with pytest.raises(UserError, match=r"train-v1\.1\.json: 3 of 4 training answers are not at "
                                      r"their answer_start \(more than 1%; first: "
                                      r"data\[0\]\.paragraphs\[0\]\.qas\[0\] id 'q0': 'good' not "
                                      r"found at answer_start=17\)"):
    task.read_examples(data_dir, "train")


def test_a_few_misplaced_answers_are_skipped_and_counted(tmp_path):
  data_dir = _squad_file(tmp_path, [18] * 199 + [17])
  task = SquadV1Task(get_task_config("squad_v1"))
  examples = task.read_examples(data_dir, "train")
  assert len(examples) == 199 and "q199" not in {e.qas_id for e in examples}
  assert task.data_notes["skipped_answers"] == {"train": 1}
  assert all(" ".join(e.doc_tokens[e.start_position:e.end_position + 1]) == "good"
             for e in examples)


def test_whitespace_inside_an_answer_may_differ(tmp_path):
  """As the original: "Café au lait" matches "Café  au lait" in the passage at its start."""
  data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": fx.CURIE, "qas": [
      {"id": "c", "question": "what?",
       "answers": [{"text": "Café au lait", "answer_start": fx.CAFE}]}]}]}]}
  data_dir = fx.write_json(tmp_path, "train-v1.1.json", data)
  task = SquadV1Task(get_task_config("squad_v1"))
  (example,) = task.read_examples(data_dir, "train")
  words = example.doc_tokens[example.start_position:example.end_position + 1]
  assert words == ["Café", "au", "lait."]
