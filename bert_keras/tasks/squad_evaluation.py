"""Exact ports of the official SQuAD evaluation scripts (evaluate-v1.1.py and evaluate-v2.0.py).

EM and F1 normalise case, punctuation, the articles a/an/the and whitespace, and take the maximum
over the gold answers. v2.0 differs in two places the ports keep: an empty gold list means "no
answer" (gold ['']), and F1 against an empty string is 1 only when both are empty. Scores are
percentages, as the scripts print them, under the scripts' own keys (v1.1: exact_match, f1;
v2.0: exact, f1, total, HasAns_*, NoAns_*, best_exact, best_f1 and their thresholds). One departure
from the v2.0 script, in its threshold search (`find_best_thresh`): best_exact / best_f1 are the
scores their reported thresholds give.
"""

from __future__ import annotations

import collections
import re
import string
from typing import Mapping, Sequence


def normalize_answer(s: str) -> str:
  """Lower text and remove punctuation, articles and extra whitespace (both scripts)."""

  def remove_articles(text):
    return re.sub(r"\b(a|an|the)\b", " ", text)

  def white_space_fix(text):
    return " ".join(text.split())

  def remove_punc(text):
    exclude = set(string.punctuation)
    return "".join(ch for ch in text if ch not in exclude)

  return white_space_fix(remove_articles(remove_punc(s.lower())))


# --- v1.1 -------------------------------------------------------------------------------------


def f1_score_v1(prediction: str, ground_truth: str) -> float:
  prediction_tokens = normalize_answer(prediction).split()
  ground_truth_tokens = normalize_answer(ground_truth).split()
  common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
  num_same = sum(common.values())
  if num_same == 0:
    return 0
  precision = 1.0 * num_same / len(prediction_tokens)
  recall = 1.0 * num_same / len(ground_truth_tokens)
  return (2 * precision * recall) / (precision + recall)


def exact_match_score_v1(prediction: str, ground_truth: str) -> bool:
  return normalize_answer(prediction) == normalize_answer(ground_truth)


def metric_max_over_ground_truths(metric_fn, prediction: str, ground_truths: Sequence[str]):
  return max(metric_fn(prediction, gt) for gt in ground_truths)


def evaluate_v1(dataset: Sequence[Mapping], predictions: Mapping[str, str]) -> dict:
  """evaluate-v1.1.py `evaluate`: dataset is the JSON's "data" list; unanswered ids score 0."""
  f1 = exact_match = total = 0
  for article in dataset:
    for paragraph in article["paragraphs"]:
      for qa in paragraph["qas"]:
        total += 1
        if qa["id"] not in predictions:
          continue
        ground_truths = [x["text"] for x in qa["answers"]]
        prediction = predictions[qa["id"]]
        exact_match += metric_max_over_ground_truths(exact_match_score_v1, prediction,
                                                     ground_truths)
        f1 += metric_max_over_ground_truths(f1_score_v1, prediction, ground_truths)
  exact_match = 100.0 * exact_match / total if total else 0.0
  f1 = 100.0 * f1 / total if total else 0.0
  return {"exact_match": exact_match, "f1": f1}


# --- v2.0 -------------------------------------------------------------------------------------


def get_tokens(s: str) -> list[str]:
  if not s:
    return []
  return normalize_answer(s).split()


def compute_exact(a_gold: str, a_pred: str) -> int:
  return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold: str, a_pred: str) -> float:
  gold_toks = get_tokens(a_gold)
  pred_toks = get_tokens(a_pred)
  common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
  num_same = sum(common.values())
  if len(gold_toks) == 0 or len(pred_toks) == 0:
    # If either is no-answer, then F1 is 1 if they agree, 0 otherwise.
    return int(gold_toks == pred_toks)
  if num_same == 0:
    return 0
  precision = 1.0 * num_same / len(pred_toks)
  recall = 1.0 * num_same / len(gold_toks)
  return (2 * precision * recall) / (precision + recall)


def make_qid_to_has_ans(dataset: Sequence[Mapping]) -> dict[str, bool]:
  qid_to_has_ans = {}
  for article in dataset:
    for p in article["paragraphs"]:
      for qa in p["qas"]:
        qid_to_has_ans[qa["id"]] = bool(qa["answers"])
  return qid_to_has_ans


def get_raw_scores(dataset: Sequence[Mapping], preds: Mapping[str, str]):
  exact_scores, f1_scores = {}, {}
  for article in dataset:
    for p in article["paragraphs"]:
      for qa in p["qas"]:
        qid = qa["id"]
        gold_answers = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])]
        if not gold_answers:
          # For unanswerable questions, only correct answer is empty string.
          gold_answers = [""]
        if qid not in preds:
          continue
        a_pred = preds[qid]
        exact_scores[qid] = max(compute_exact(a, a_pred) for a in gold_answers)
        f1_scores[qid] = max(compute_f1(a, a_pred) for a in gold_answers)
  return exact_scores, f1_scores


def apply_no_ans_threshold(scores, na_probs, qid_to_has_ans, na_prob_thresh):
  new_scores = {}
  for qid, s in scores.items():
    pred_na = na_probs[qid] > na_prob_thresh
    if pred_na:
      new_scores[qid] = float(not qid_to_has_ans[qid])
    else:
      new_scores[qid] = s
  return new_scores


def make_eval_dict(exact_scores, f1_scores, qid_list=None) -> dict:
  if not qid_list:
    total = len(exact_scores)
    return collections.OrderedDict([
        ("exact", 100.0 * sum(exact_scores.values()) / total if total else 0.0),
        ("f1", 100.0 * sum(f1_scores.values()) / total if total else 0.0),
        ("total", total),
    ])
  total = len(qid_list)
  return collections.OrderedDict([
      ("exact", 100.0 * sum(exact_scores[k] for k in qid_list) / total),
      ("f1", 100.0 * sum(f1_scores[k] for k in qid_list) / total),
      ("total", total),
  ])


def merge_eval(main_eval, new_eval, prefix) -> None:
  for k in new_eval:
    main_eval[f"{prefix}_{k}"] = new_eval[k]


def find_best_thresh(preds, scores, na_probs, qid_to_has_ans):
  """(best score, its threshold) over the thresholds `na_prob > thresh => no answer`: the score
  `apply_no_ans_threshold` gives at the returned threshold is the returned score.

  Two corrections of the official sweep, which reports pairs no threshold gives when na_probs are
  not probabilities (BERT's null odds are often negative) or tie: it starts from "every question
  abstains" labelled threshold 0.0, which abstains on none of the questions whose na_prob is below
  0 (here: a threshold below the lowest na_prob, 0.0 when that is one, as the official script
  returns for probabilities); and it scores after each question, also between questions of one
  na_prob, which no threshold separates (here: after the last of them).
  """
  num_no_ans = sum(1 for k in qid_to_has_ans if not qid_to_has_ans[k])
  cur_score = num_no_ans
  best_score = cur_score
  qid_list = [k for k in sorted(na_probs, key=lambda k: na_probs[k]) if k in scores]
  lowest = na_probs[qid_list[0]] if qid_list else 0.0
  best_thresh = 0.0 if lowest > 0.0 else lowest - 1.0
  for i, qid in enumerate(qid_list):
    if qid_to_has_ans[qid]:
      diff = scores[qid]
    else:
      if preds[qid]:
        diff = -1
      else:
        diff = 0
    cur_score += diff
    if i + 1 < len(qid_list) and na_probs[qid_list[i + 1]] == na_probs[qid]:
      continue  # a tie: no threshold answers this question without the next
    if cur_score > best_score:
      best_score = cur_score
      best_thresh = na_probs[qid]
  return 100.0 * best_score / len(scores), best_thresh


def find_all_best_thresh(main_eval, preds, exact_raw, f1_raw, na_probs, qid_to_has_ans) -> None:
  best_exact, exact_thresh = find_best_thresh(preds, exact_raw, na_probs, qid_to_has_ans)
  best_f1, f1_thresh = find_best_thresh(preds, f1_raw, na_probs, qid_to_has_ans)
  main_eval["best_exact"] = best_exact
  main_eval["best_exact_thresh"] = exact_thresh
  main_eval["best_f1"] = best_f1
  main_eval["best_f1_thresh"] = f1_thresh


def evaluate_v2(dataset: Sequence[Mapping], preds: Mapping[str, str],
                na_probs: Mapping[str, float] | None = None,
                na_prob_thresh: float = 1.0) -> dict:
  """evaluate-v2.0.py `main` without the plots: overall, HasAns_*, NoAns_* and, when na_probs is
  given, best_exact/best_f1 and their thresholds.

  `na_probs` may be any score that grows with "no answer" (BERT passes s_null - s_best_span);
  `preds` should then hold the best non-null answers so the threshold sweep sees real spans.
  """
  if na_probs is None:
    na_probs = {k: 0.0 for k in preds}
  qid_to_has_ans = make_qid_to_has_ans(dataset)
  has_ans_qids = [k for k, v in qid_to_has_ans.items() if v]
  no_ans_qids = [k for k, v in qid_to_has_ans.items() if not v]
  exact_raw, f1_raw = get_raw_scores(dataset, preds)
  exact_thresh = apply_no_ans_threshold(exact_raw, na_probs, qid_to_has_ans, na_prob_thresh)
  f1_thresh = apply_no_ans_threshold(f1_raw, na_probs, qid_to_has_ans, na_prob_thresh)
  out_eval = make_eval_dict(exact_thresh, f1_thresh)
  if has_ans_qids:
    merge_eval(out_eval, make_eval_dict(exact_thresh, f1_thresh, qid_list=has_ans_qids), "HasAns")
  if no_ans_qids:
    merge_eval(out_eval, make_eval_dict(exact_thresh, f1_thresh, qid_list=no_ans_qids), "NoAns")
  find_all_best_thresh(out_eval, preds, exact_raw, f1_raw, na_probs, qid_to_has_ans)
  return dict(out_eval)
