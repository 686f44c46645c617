"""SQuAD v1.1 and v2.0 (Devlin et al., 2018, sections 4.2 and 4.3), the way the released
run_squad.py does it: whitespace passage words with a char -> word map, WordPiece per word, sliding
windows of max_seq_length with doc_stride, question as segment A (max_query_length pieces), the
passage window as segment B; span score S.T_i + E.T_j with j >= i, n-best 20, max answer length 30;
the answer mapped back to the original passage characters; official EM / F1.

v2.0: no-answer questions point at [CLS]; s_null = S.C + E.C is compared with the best non-null span,
and the threshold on s_null - s_best that maximises dev F1 (official v2.0 script) is saved in
task_info.json for serving.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import re
from typing import Any, Callable, Mapping, Sequence

import keras
import numpy as np
from absl import logging

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.json_io import json_type_name, read_json_file
from bert_keras.tasks import squad_evaluation
from bert_keras.models.heads.bert_span_labeler import BertSpanLabeler
from bert_keras.models.heads.encoder_head import INPUT_NAMES
from bert_keras.tasks.packing import pack
from bert_keras.tasks.readers import require_file
from bert_keras.tasks.registry import register_task
from bert_keras.tasks.task import Features, Task
from bert_keras.text.reference_tokenizer import ReferenceTokenizer


@dataclasses.dataclass
class SquadExample:
  """One question. doc_tokens are the passage's whitespace words; word_starts their char offsets
  in `context`. start/end_position are word indices of the training answer (-1: none)."""

  qas_id: str
  question_text: str
  context: str
  doc_tokens: list
  word_starts: list
  answers: list  # every gold answer text (dev); [] for a v2 no-answer question
  orig_answer_text: str = ""
  start_position: int = -1
  end_position: int = -1
  is_impossible: bool = False


def split_passage(context: str) -> tuple[list[str], list[int], list[int]]:
  """(words, char_to_word_offset, word_starts), the original's whitespace split of a passage."""
  doc_tokens, char_to_word_offset, word_starts = [], [], []
  prev_is_whitespace = True
  for i, c in enumerate(context):
    if c in (" ", "\t", "\r", "\n", "\u202f"):
      prev_is_whitespace = True
    else:
      if prev_is_whitespace:
        doc_tokens.append(c)
        word_starts.append(i)
      else:
        doc_tokens[-1] += c
      prev_is_whitespace = False
    char_to_word_offset.append(len(doc_tokens) - 1)
  return doc_tokens, char_to_word_offset, word_starts


def _expect(value, kind, where: str, what: str):
  """`value` if it is a `kind` (type or tuple; a bool is no number), else a UserError naming it."""
  kinds = kind if isinstance(kind, tuple) else (kind,)
  if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
    expected = " or ".join(json_type_name(k()) for k in kinds)
    raise UserError(f"{where}: {what} is {json_type_name(value)} ({_short(value)}); expected "
                    f"{expected}")
  return value


def _short(value) -> str:
  text = repr(value)
  return text if len(text) <= 40 else text[:37] + "..."


# Training answers not at their answer_start are skipped, as the original skips them; more than
# this fraction of them means wrong offsets (e.g. all shifted by one): the file is refused.
MAX_MISPLACED_ANSWER_FRACTION = 0.01


def answer_end(context: str, start: int, text: str) -> int | None:
  """The end (exclusive) in `context` of answer `text` at `start`, or None; whitespace runs may
  differ from the passage's (the original compares whitespace-joined words)."""
  start += len(text) - len(text.lstrip())
  words = text.split()
  match = re.compile(r"\s+".join(re.escape(w) for w in words)).match(context, start)
  return match.end() if match and words else None


def read_squad(path: str, training: bool, version_2: bool,
               notes: dict | None = None) -> list[SquadExample]:
  """The official JSON's questions; a UserError names the file and JSON path of bad input.
  `notes` (training) receives notes["skipped_answers"]."""
  require_file(path, "a SQuAD JSON file")
  data = read_json_file(path, "SQuAD JSON file")
  if not isinstance(data, dict) or not isinstance(data.get("data"), list):
    raise UserError(f"{path}: expected a JSON object with a 'data' list (the SQuAD layout)")
  examples = []
  skipped = []  # (location, id, answer text, offset) of training answers not found at their offset
  seen_ids = {}  # str(id) -> (location, raw id): predictions are keyed by str(id)
  for a, article in enumerate(data["data"]):
    _expect(article, dict, f"{path}: data[{a}]", "the article")
    paragraphs = _expect(article.get("paragraphs", []), list, f"{path}: data[{a}]", "'paragraphs'")
    for p, paragraph in enumerate(paragraphs):
      where = f"{path}: data[{a}].paragraphs[{p}]"
      _expect(paragraph, dict, where, "the paragraph")
      if not isinstance(paragraph.get("context"), str) or not isinstance(paragraph.get("qas"), list):
        raise UserError(f"{where}: needs a 'context' string and a 'qas' list")
      context = paragraph["context"]
      doc_tokens, char_to_word_offset, word_starts = split_passage(context)
      for q, qa in enumerate(paragraph["qas"]):
        qloc = f"data[{a}].paragraphs[{p}].qas[{q}]"
        qwhere = f"{path}: {qloc}"
        _expect(qa, dict, qwhere, "the question")
        # Questions to predict (no gold answers) may leave 'answers' out.
        for key in ("id", "question", "answers") if training else ("id", "question"):
          if key not in qa:
            raise UserError(f"{qwhere}: missing '{key}'")
        qa = {"answers": [], **qa}
        _expect(qa["id"], (str, int), qwhere, "'id'")
        key = str(qa["id"])
        if key in seen_ids:
          first, first_id = seen_ids[key]
          raise UserError(f"{path}: duplicate question id: {qloc} has id "
                          f"{qa['id']!r} and {first} has id {first_id!r}; ids must be unique "
                          "(predictions are keyed by id)")
        seen_ids[key] = (qloc, qa["id"])
        _expect(qa["question"], str, qwhere, "'question'")
        _expect(qa["answers"], list, qwhere, "'answers'")
        is_impossible = False
        if version_2:
          # A JSON boolean: bool("false") is True, so a string here would flip the question.
          is_impossible = _expect(qa.get("is_impossible", False), bool, qwhere, "'is_impossible'")
          if is_impossible and qa["answers"]:  # the official files: "answers": []
            raise UserError(f"{qwhere} (id {qa['id']}): is_impossible is true but 'answers' has "
                            f"{len(qa['answers'])} answer(s); unanswerable questions have "
                            "\"answers\": [] (the span goes in 'plausible_answers')")
        if not version_2 and not qa["answers"] and training:
          raise UserError(f"{qwhere} (id {qa['id']}): SQuAD v1.1 questions need an answer")
        answers = []
        for n, answer in enumerate(qa["answers"]):
          awhere = f"{qwhere}.answers[{n}] (id {qa['id']})"
          _expect(answer, dict, awhere, "the answer")
          if "text" not in answer or "answer_start" not in answer:
            raise UserError(f"{qwhere} (id {qa['id']}): answers need 'text' and 'answer_start'")
          _expect(answer["text"], str, awhere, "'text'")
          start = answer["answer_start"]
          if (not isinstance(start, int) or isinstance(start, bool)
              or not 0 <= start <= len(context)):
            raise UserError(f"{qwhere} (id {qa['id']}): answer_start={start!r} is outside the "
                            f"{len(context)}-character context")
          end = start + len(answer["text"])
          if end > len(context):
            raise UserError(f"{qwhere} (id {qa['id']}): answer {_short(answer['text'])} at "
                            f"answer_start={start} ends at character {end}, past the end of the "
                            f"{len(context)}-character context")
          answers.append(answer["text"])
        example = SquadExample(qas_id=str(qa["id"]), question_text=qa["question"],
                               context=context, doc_tokens=doc_tokens, word_starts=word_starts,
                               answers=answers, is_impossible=is_impossible or not answers)
        if training and not example.is_impossible:
          answer = qa["answers"][0]
          text, offset = answer["text"], answer["answer_start"]
          if not text.strip():
            raise UserError(f"{qwhere} (id {qa['id']}): empty answer text")
          end = answer_end(context, offset, text)
          if end is None:  # skipped, as the original skips answers not near their offset
            logging.warning("%s (id %s): answer %r not found at answer_start=%d; skipped", qwhere,
                            qa["id"], text, offset)
            skipped.append((qloc, qa["id"], text, offset))
            continue
          start_word = char_to_word_offset[offset + len(text) - len(text.lstrip())]
          end_word = char_to_word_offset[end - 1]
          example.orig_answer_text = text
          example.start_position, example.end_position = start_word, end_word
        examples.append(example)
  if skipped:
    where, qid, text, offset = skipped[0]
    first = f"first: {where} id {qid!r}: {_short(text)} not found at answer_start={offset}"
    answered = len(skipped) + sum(not e.is_impossible for e in examples)
    if not examples:
      raise UserError(f"{path}: no usable questions: {len(skipped)} of {len(skipped)} skipped "
                      f"because the answer text is not at its answer_start ({first})")
    if len(skipped) > MAX_MISPLACED_ANSWER_FRACTION * answered:
      raise UserError(f"{path}: {len(skipped)} of {answered} training answers are not at their "
                      f"answer_start (more than {MAX_MISPLACED_ANSWER_FRACTION:.0%}; {first}); "
                      "are the offsets shifted?")
    logging.warning("%s: %d of %d training answers skipped: not at their answer_start (%s)",
                    path, len(skipped), answered, first)
  if not examples:
    raise UserError(f"{path}: no questions")
  if notes is not None and training:
    notes["skipped_answers"] = len(skipped)
  return examples


def improve_answer_span(doc_ids: Sequence[int], start: int, end: int,
                        answer_ids: Sequence[int]) -> tuple[int, int]:
  """The smallest sub-token span inside [start, end] whose pieces are exactly the answer's pieces
  (e.g. answer "1895" inside the word "(1895-1943)")."""
  answer_ids = list(answer_ids)
  for new_start in range(start, end + 1):
    for new_end in range(end, new_start - 1, -1):
      if list(doc_ids[new_start:new_end + 1]) == answer_ids:
        return new_start, new_end
  return start, end


def check_is_max_context(doc_spans: Sequence[tuple[int, int]], cur_span_index: int,
                         position: int) -> bool:
  """True when window `cur_span_index` gives token `position` the most context on both sides
  (score = min(left, right) + 0.01 * window length), as in the original."""
  best_score, best_span_index = None, None
  for span_index, (span_start, span_length) in enumerate(doc_spans):
    end = span_start + span_length - 1
    if position < span_start or position > end:
      continue
    score = min(position - span_start, end - position) + 0.01 * span_length
    if best_score is None or score > best_score:
      best_score, best_span_index = score, span_index
  return cur_span_index == best_span_index


def doc_windows(num_tokens: int, max_tokens_for_doc: int, doc_stride: int) -> list[tuple[int, int]]:
  """(start, length) windows over the passage pieces, doc_stride apart, the last one ending at the end."""
  spans, start = [], 0
  while True:
    length = min(num_tokens - start, max_tokens_for_doc)
    spans.append((start, length))
    if start + length >= num_tokens:
      return spans
    start += min(length, doc_stride)


def _strip_spaces(text: str):
  ns_chars, ns_to_s_map = [], {}
  for i, c in enumerate(text):
    if c == " ":
      continue
    ns_to_s_map[len(ns_chars)] = i
    ns_chars.append(c)
  return "".join(ns_chars), ns_to_s_map


def final_text_span(pred_text: str, orig_text: str,
                    basic_tokenize: Callable[[str], list]) -> tuple[int, int] | None:
  """The original `get_final_text` as character positions of the prediction in `orig_text`,
  aligned by deleting spaces (which normalisation only moves). None = all of orig_text."""
  tok_text = " ".join(basic_tokenize(orig_text))
  start_position = tok_text.find(pred_text)
  if start_position == -1:
    return None
  end_position = start_position + len(pred_text) - 1
  orig_ns_text, orig_ns_to_s_map = _strip_spaces(orig_text)
  tok_ns_text, tok_ns_to_s_map = _strip_spaces(tok_text)
  if len(orig_ns_text) != len(tok_ns_text):
    return None
  tok_s_to_ns_map = {v: k for k, v in tok_ns_to_s_map.items()}
  orig_start = orig_ns_to_s_map.get(tok_s_to_ns_map.get(start_position, -1))
  orig_end = orig_ns_to_s_map.get(tok_s_to_ns_map.get(end_position, -1))
  if orig_start is None or orig_end is None:
    return None
  return orig_start, orig_end


def answer_in_context(example: SquadExample, first_word: int, last_word: int, pred_text: str,
                      basic_tokenize: Callable[[str], list]) -> tuple[str, int]:
  """(answer text, start char) from `example.context` itself (the passage's own characters), for
  the words first_word..last_word trimmed to the predicted pieces."""
  words = example.doc_tokens[first_word:last_word + 1]
  orig_text = " ".join(words)
  # joined-text index -> context index, for every non-space character of orig_text.
  to_context = []
  for k, word in enumerate(words):
    to_context.extend(example.word_starts[first_word + k] + i for i in range(len(word)))
    to_context.append(None)  # the joining space
  span = final_text_span(pred_text, orig_text, basic_tokenize)
  start, end = (0, len(orig_text) - 1) if span is None else span
  char_start, char_end = to_context[start], to_context[end]
  return example.context[char_start:char_end + 1], char_start


def _top_indexes(logits: np.ndarray, n: int) -> list[int]:
  return [int(i) for i in np.argsort(-logits, kind="stable")[:n]]


class SquadTask(Task):
  """SQuAD v1.1 (version_2 = False) or v2.0 (True)."""

  version_2 = False
  file_version = "v1.1"
  # The test set is hidden: a submission is run on files in the dev layout (CodaLab).
  predict_splits = ("dev",)
  _reference = None  # the original's tokenizer, for post-processing (set by make_features)

  def read_examples(self, data_dir: str, split: str) -> list:
    path = os.path.join(self.resolve_data_dir(data_dir), f"{split}-{self.file_version}.json")
    notes = {}
    examples = read_squad(path, training=split == self.train_split, version_2=self.version_2,
                          notes=notes)
    if "skipped_answers" in notes:
      self.data_notes.setdefault("skipped_answers", {})[split] = notes["skipped_answers"]
    return examples

  def make_features(self, examples: Sequence[SquadExample], tokenizer, training: bool) -> Features:
    cfg = self.config
    self._reference = ReferenceTokenizer(tokenizer.vocabulary, lower_case=tokenizer.lower_case)
    # Tokenize every distinct word / question / answer once (in-graph tokenizer, in batches).
    texts = sorted({w for e in examples for w in e.doc_tokens} | {e.question_text for e in examples}
                   | {e.orig_answer_text for e in examples if e.orig_answer_text})
    pieces = {}
    for i in range(0, len(texts), 4096):
      chunk = texts[i:i + 4096]
      pieces.update(zip(chunk, tokenizer.encode(chunk)))
    cls_id, sep_id, pad_id = tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id
    seq = cfg.max_seq_length
    rows = collections.defaultdict(list)
    meta = []
    for example_index, example in enumerate(examples):
      query = pieces[example.question_text][:cfg.max_query_length]
      max_tokens_for_doc = seq - len(query) - 3
      if max_tokens_for_doc < 1:
        raise UserError(f"max_seq_length={seq} leaves no room for the passage after a "
                        f"{len(query)}-piece question; raise it or lower max_query_length")
      tok_to_orig, orig_to_tok, doc_ids = [], [], []
      for i, word in enumerate(example.doc_tokens):
        orig_to_tok.append(len(doc_ids))
        for piece in pieces[word]:
          tok_to_orig.append(i)
          doc_ids.append(piece)
      tok_start = tok_end = -1
      if training and not example.is_impossible:
        tok_start = orig_to_tok[example.start_position]
        if example.end_position < len(example.doc_tokens) - 1:
          tok_end = orig_to_tok[example.end_position + 1] - 1
        else:
          tok_end = len(doc_ids) - 1
        tok_start, tok_end = improve_answer_span(doc_ids, tok_start, tok_end,
                                                 pieces[example.orig_answer_text])
      spans = doc_windows(len(doc_ids), max_tokens_for_doc, cfg.doc_stride)
      offset = len(query) + 2  # the window's first piece, after [CLS] query [SEP]
      for span_index, (span_start, span_length) in enumerate(spans):
        window = range(span_start, span_start + span_length)
        token_to_orig = {offset + i: tok_to_orig[p] for i, p in enumerate(window)}
        max_context = {offset + i: check_is_max_context(spans, span_index, p)
                       for i, p in enumerate(window)}
        # Fits: max_tokens_for_doc leaves room for the window, so nothing is truncated.
        packed = pack(query, doc_ids[span_start:span_start + span_length], seq, cls_id, sep_id,
                      pad_id)
        for name, row in zip(INPUT_NAMES, packed):
          rows[name].append(row)
        start_position = end_position = 0  # [CLS]: no answer in this window (or none at all)
        if training and not example.is_impossible:
          span_end = span_start + span_length - 1
          if span_start <= tok_start and tok_end <= span_end:
            start_position = tok_start - span_start + offset
            end_position = tok_end - span_start + offset
        rows["start_positions"].append(start_position)
        rows["end_positions"].append(end_position)
        meta.append({"example_index": example_index, "span_index": span_index,
                     "token_to_orig": token_to_orig, "max_context": max_context,
                     "length": offset + span_length + 1})
    inputs = {k: np.array(rows[k], np.int32).reshape(-1, seq) for k in INPUT_NAMES}
    labels = None
    if training:
      labels = {"start_logits": np.array(rows["start_positions"], np.int32),
                "end_logits": np.array(rows["end_positions"], np.int32)}
    return Features(inputs=inputs, labels=labels, meta=meta)

  def build_model(self, encoder: keras.Model) -> keras.Model:
    return BertSpanLabeler(encoder, name=f"{self.name}_span_labeler")

  def compile_kwargs(self) -> dict:
    # Mean of the start and end cross-entropies, as in the original.
    xent = lambda: keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return {"loss": {"start_logits": xent(), "end_logits": xent()},
            "loss_weights": {"start_logits": 0.5, "end_logits": 0.5}}

  def postprocess(self, examples, features: Features, outputs) -> dict:
    """n-best spans per question over all its windows -> {"predictions", "nbest", ...}."""
    if self._reference is None:
      raise UserError("SquadTask.postprocess needs make_features to have run (tokenizer)")
    return postprocess_spans(examples, features, np.asarray(outputs["start_logits"], np.float32),
                             np.asarray(outputs["end_logits"], np.float32), self._reference,
                             self.config, self.version_2)

  def has_labels(self, examples) -> bool:
    return any(e.answers for e in examples)

  def evaluate(self, examples, predictions) -> dict:
    dataset = [{"paragraphs": [{"qas": [{"id": e.qas_id, "answers": [{"text": t} for t in e.answers]}
                                        for e in examples]}]}]
    if not self.version_2:
      return squad_evaluation.evaluate_v1(dataset, predictions["predictions"])
    # The threshold sweep sees the best non-null span of every question (BERT's null_odds).
    return squad_evaluation.evaluate_v2(dataset, predictions["best_non_null"],
                                        predictions["null_odds"],
                                        na_prob_thresh=self.config.null_score_diff_threshold)

  def write_predictions(self, predictions: Any, path_stem: str) -> str:
    """`<path_stem>.json` ({id: answer}, for the official script), `.nbest.json`, for v2.0
    `.null_odds.json` and `.best_non_null.json`."""
    for key, value in predictions.items():
      if key != "predictions":
        write_text(f"{path_stem}.{key}.json", json.dumps(value, ensure_ascii=False, indent=1))
    return super().write_predictions(predictions["predictions"], path_stem)

  def write_submission(self, examples, predictions, split: str, directory: str) -> list[str]:
    """predictions.json ({id: answer}), for v2.0 null_odds.json (the script's --na-prob-file)."""
    paths = [os.path.join(directory, "predictions.json")]
    write_text(paths[0], json.dumps(predictions["predictions"], ensure_ascii=False, indent=1))
    if self.version_2:
      paths.append(os.path.join(directory, "null_odds.json"))
      write_text(paths[1], json.dumps(predictions["null_odds"], indent=1))
    return paths

  def task_info(self, metrics: Mapping[str, Any] | None = None) -> dict:
    info = super().task_info(metrics)
    info.update(num_segments=2, doc_stride=self.config.doc_stride,
                max_query_length=self.config.max_query_length,
                n_best_size=self.config.n_best_size,
                max_answer_length=self.config.max_answer_length, version_2=self.version_2)
    if self.version_2:
      threshold = self.config.null_score_diff_threshold
      if metrics and "best_f1_thresh" in metrics:
        threshold = float(metrics["best_f1_thresh"])  # searched on dev (section 4.3)
      info["null_score_diff_threshold"] = threshold
    return info


def postprocess_spans(examples: Sequence[SquadExample], features: Features,
                      start_logits: np.ndarray, end_logits: np.ndarray, reference, config,
                      version_2: bool) -> dict:
  """The original `write_predictions`, on logits (num_features, seq): {"predictions": {qid: text},
  "nbest": {qid: [...]}} and for v2 also {"null_odds": {qid: s_null - s_best}, "best_non_null"}."""
  meta, n_best_size = features.meta, config.n_best_size
  by_example = collections.defaultdict(list)
  for feature_index, m in enumerate(meta):
    by_example[m["example_index"]].append(feature_index)
  predictions, nbest_json, null_odds, best_non_null = {}, {}, {}, {}
  for example_index, example in enumerate(examples):
    prelim = []  # (score, feature_index, start, end)
    min_null = None  # (score, feature_index)
    for f in by_example[example_index]:
      m, start, end = meta[f], start_logits[f], end_logits[f]
      if version_2:
        null_score = float(start[0] + end[0])  # s_null = S.C + E.C
        if min_null is None or null_score < min_null[0]:
          min_null = (null_score, f)
      for s in _top_indexes(start[:m["length"]], n_best_size):
        for e in _top_indexes(end[:m["length"]], n_best_size):
          if s not in m["token_to_orig"] or e not in m["token_to_orig"]:
            continue  # question, [CLS], [SEP] or padding
          if not m["max_context"].get(s, False):
            continue
          if e < s or e - s + 1 > config.max_answer_length:
            continue
          prelim.append((float(start[s] + end[e]), f, s, e))
    if version_2 and min_null is not None:
      prelim.append((min_null[0], min_null[1], 0, 0))
    prelim.sort(key=lambda p: -p[0])
    nbest, seen = [], set()
    for score, f, s, e in prelim:
      if len(nbest) >= n_best_size:
        break
      text, char_start = "", -1  # s == 0: the null span ([CLS])
      if s > 0:
        pieces = [reference.vocabulary[int(i)] for i in features.inputs["input_word_ids"][f][s:e + 1]]
        pred_text = " ".join(pieces).replace(" ##", "").replace("##", "")
        pred_text = " ".join(pred_text.strip().split())
        token_to_orig = meta[f]["token_to_orig"]
        text, char_start = answer_in_context(example, token_to_orig[s], token_to_orig[e],
                                             pred_text, reference.basic_tokenize)
      if text in seen:
        continue
      seen.add(text)
      nbest.append({"text": text, "answer_start": char_start, "start_logit": float(start_logits[f][s]),
                    "end_logit": float(end_logits[f][e]), "score": score})
    if version_2 and "" not in seen and min_null is not None:
      f = min_null[1]
      nbest.append({"text": "", "answer_start": -1, "start_logit": float(start_logits[f][0]),
                    "end_logit": float(end_logits[f][0]), "score": min_null[0]})
    if not nbest:
      nbest.append({"text": "empty", "answer_start": -1, "start_logit": 0.0, "end_logit": 0.0,
                    "score": 0.0})
    probs = np.exp(np.array([n["score"] for n in nbest]) - max(n["score"] for n in nbest))
    for n, p in zip(nbest, probs / probs.sum()):
      n["probability"] = float(p)
    nbest_json[example.qas_id] = nbest
    if not version_2:
      predictions[example.qas_id] = nbest[0]["text"]
      continue
    non_null = next((n for n in nbest if n["text"]), None)
    best_score = non_null["score"] if non_null else -np.inf
    diff = float(min_null[0] - best_score) if min_null is not None else 0.0
    null_odds[example.qas_id] = diff if np.isfinite(diff) else 1e9
    best_text = best_non_null[example.qas_id] = non_null["text"] if non_null else ""
    predictions[example.qas_id] = "" if diff > config.null_score_diff_threshold else best_text
  result = {"predictions": predictions, "nbest": nbest_json}
  if version_2:
    result.update(null_odds=null_odds, best_non_null=best_non_null)
  return result


@register_task("squad_v1")
class SquadV1Task(SquadTask):
  """SQuAD v1.1: every question has an answer in the passage."""


@register_task("squad_v2")
class SquadV2Task(SquadTask):
  """SQuAD v2.0: questions may have no answer ([CLS] span)."""

  version_2 = True
  file_version = "v2.0"
