"""Exact ports of the official SQuAD evaluation scripts (evaluate-v1.1.py and evaluate-v2.0.py).

EM and F1 normalise case, punctuation, the articles a/an/the and whitespace, and take the maximum
over the gold answers; percentages under the scripts' own keys. v2.0 differs in two places the
ports keep: an empty gold list means "no answer" (gold ['']), and F1 against an empty string is 1
only when both are empty. One departure from the v2.0 script (`find_best_thresh`): best_exact /
best_f1 are the scores their reported thresholds give.
"""

from __future__ import annotations

import collections
import re
import string
from typing import Iterator, Mapping, Sequence


def normalize_answer(s: str) -> str:
  """Lower text and remove punctuation, articles and extra whitespace (both scripts)."""
  s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
  return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())


def _f1(prediction_tokens: list, gold_tokens: list) -> float:
  common = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
  num_same = sum(common.values())
  if num_same == 0:
    return 0
  precision = 1.0 * num_same / len(prediction_tokens)
  recall = 1.0 * num_same / len(gold_tokens)
  return (2 * precision * recall) / (precision + recall)


def _questions(dataset: Sequence[Mapping]) -> Iterator[Mapping]:
  """The qas of a SQuAD JSON's "data" list, in file order."""
  for article in dataset:
    for paragraph in article["paragraphs"]:
      yield from paragraph["qas"]


# --- v1.1 -------------------------------------------------------------------------------------


def f1_score_v1(prediction: str, ground_truth: str) -> float:
  return _f1(normalize_answer(prediction).split(), normalize_answer(ground_truth).split())


def exact_match_score_v1(prediction: str, ground_truth: str) -> bool:
  return normalize_answer(prediction) == normalize_answer(ground_truth)


def evaluate_v1(dataset: Sequence[Mapping], predictions: Mapping[str, str]) -> dict:
  """evaluate-v1.1.py `evaluate`: dataset is the JSON's "data" list; unanswered ids score 0."""
  f1 = exact_match = total = 0
  for qa in _questions(dataset):
    total += 1
    if qa["id"] not in predictions:
      continue
    golds, prediction = [x["text"] for x in qa["answers"]], predictions[qa["id"]]
    exact_match += max(exact_match_score_v1(prediction, gold) for gold in golds)
    f1 += max(f1_score_v1(prediction, gold) for gold in golds)
  return {"exact_match": 100.0 * exact_match / total if total else 0.0,
          "f1": 100.0 * f1 / total if total else 0.0}


# --- v2.0 -------------------------------------------------------------------------------------


def compute_f1(a_gold: str, a_pred: str) -> float:
  gold_toks, pred_toks = normalize_answer(a_gold).split(), normalize_answer(a_pred).split()
  if not gold_toks or not pred_toks:
    # If either is no-answer, then F1 is 1 if they agree, 0 otherwise.
    return int(gold_toks == pred_toks)
  return _f1(pred_toks, gold_toks)


def find_best_thresh(preds, scores, na_probs, qid_to_has_ans):
  """(best score, its threshold) over the thresholds `na_prob > thresh => no answer`. The official
  sweep reports pairs no threshold gives when na_probs are negative (BERT's null odds) or tie: it
  labels "every question abstains" 0.0 (here: below the lowest na_prob), and scores between tied
  questions (here: after the last of them)."""
  cur_score = best_score = sum(1 for k in qid_to_has_ans if not qid_to_has_ans[k])
  qid_list = [k for k in sorted(na_probs, key=lambda k: na_probs[k]) if k in scores]
  lowest = na_probs[qid_list[0]] if qid_list else 0.0
  best_thresh = 0.0 if lowest > 0.0 else lowest - 1.0
  for i, qid in enumerate(qid_list):
    if qid_to_has_ans[qid]:
      cur_score += scores[qid]
    elif preds[qid]:
      cur_score += -1
    if i + 1 < len(qid_list) and na_probs[qid_list[i + 1]] == na_probs[qid]:
      continue  # a tie: no threshold answers this question without the next
    if cur_score > best_score:
      best_score, best_thresh = cur_score, na_probs[qid]
  return 100.0 * best_score / len(scores), best_thresh


def evaluate_v2(dataset: Sequence[Mapping], preds: Mapping[str, str],
                na_probs: Mapping[str, float] | None = None,
                na_prob_thresh: float = 1.0) -> dict:
  """evaluate-v2.0.py `main` without the plots: overall, HasAns_*, NoAns_* and best_exact/best_f1
  with their thresholds. `na_probs` may be any score that grows with "no answer" (BERT passes
  s_null - s_best_span); `preds` should then hold the best non-null answers."""
  if na_probs is None:
    na_probs = {k: 0.0 for k in preds}
  qid_to_has_ans = {qa["id"]: bool(qa["answers"]) for qa in _questions(dataset)}
  exact_raw, f1_raw = {}, {}
  for qa in _questions(dataset):
    if qa["id"] not in preds:
      continue
    # For unanswerable questions, only correct answer is empty string.
    golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])] or [""]
    a_pred = preds[qa["id"]]
    exact_raw[qa["id"]] = max(int(normalize_answer(a) == normalize_answer(a_pred)) for a in golds)
    f1_raw[qa["id"]] = max(compute_f1(a, a_pred) for a in golds)
  thresholded = [
      {qid: float(not qid_to_has_ans[qid]) if na_probs[qid] > na_prob_thresh else s
       for qid, s in raw.items()} for raw in (exact_raw, f1_raw)]

  def scores(qids, prefix=""):
    total = len(qids)
    return {f"{prefix}exact": 100.0 * sum(thresholded[0][k] for k in qids) / total if total else 0.0,
            f"{prefix}f1": 100.0 * sum(thresholded[1][k] for k in qids) / total if total else 0.0,
            f"{prefix}total": total}

  out = scores(list(thresholded[0]))
  for prefix, has_ans in (("HasAns_", True), ("NoAns_", False)):
    qids = [k for k, v in qid_to_has_ans.items() if v == has_ans]
    if qids:
      out.update(scores(qids, prefix))
  for key, raw in (("exact", exact_raw), ("f1", f1_raw)):
    out[f"best_{key}"], out[f"best_{key}_thresh"] = find_best_thresh(preds, raw, na_probs,
                                                                     qid_to_has_ans)
  return out
