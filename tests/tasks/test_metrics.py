"""Task metrics against values computed by hand."""

import math
import random

import pytest

from bert_keras.tasks import metrics
from bert_keras.tasks import squad_evaluation as se


def test_classification_metrics_by_hand():
  gold = [1, 1, 0, 0, 1]
  pred = [1, 0, 0, 1, 1]
  # TP=2 FP=1 FN=1 TN=1.
  assert metrics.accuracy(gold, pred) == pytest.approx(3 / 5)
  assert metrics.f1(gold, pred) == pytest.approx(2 * (2 / 3) * (2 / 3) / (4 / 3))
  mcc = (2 * 1 - 1 * 1) / math.sqrt(3 * 3 * 2 * 2)
  assert metrics.matthews_corrcoef(gold, pred) == pytest.approx(mcc)


def test_regression_metrics_by_hand():
  gold = [1.0, 2.0, 3.0, 4.0]
  pred = [1.0, 3.0, 2.0, 5.0]
  # Pearson: means 2.5 and 2.75; cov = sum(dx*dy) = 5.5; sx^2 = 5, sy^2 = 8.75.
  assert metrics.pearson(gold, pred) == pytest.approx(5.5 / math.sqrt(5 * 8.75))
  # Spearman: ranks [1,2,3,4] vs [1,3,2,4]: 1 - 6*2/(4*15) = 0.8.
  assert metrics.spearman(gold, pred) == pytest.approx(0.8)
  assert metrics.pearson(gold, [1.0] * 4) == 0.0


def test_entity_scores_conlleval():
  gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
  pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "B-MISC"]]
  # gold entities: PER, LOC, ORG (3); predicted: PER, ORG(wrong type), ORG, MISC (4); correct 2.
  scores = metrics.entity_scores(gold, pred)  # 0-100, as conlleval prints them
  assert scores["precision"] == pytest.approx(100 * 2 / 4)
  assert scores["recall"] == pytest.approx(100 * 2 / 3)
  assert scores["f1"] == pytest.approx(100 * 2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
  # conlleval reads IOB1 too: "I-PER I-PER" is one entity, "I-LOC B-LOC" two.
  iob1 = metrics.entity_scores([["I-PER", "I-PER", "I-LOC", "B-LOC"]],
                               [["B-PER", "I-PER", "B-LOC", "B-LOC"]])
  assert iob1["f1"] == pytest.approx(100.0)


def test_squad_normalisation_and_scores():
  assert se.normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
  assert se.normalize_answer("an apple a day") == "apple day"
  assert se.exact_match_score_v1("the Nobel Prize.", "Nobel prize")
  # pred tokens [nobel, prize, in, physics], gold [nobel, prize]: P=2/4 R=1 F1=2/3.
  assert se.f1_score_v1("Nobel Prize in physics", "the Nobel Prize") == pytest.approx(2 / 3)
  data = [{"paragraphs": [{"qas": [
      {"id": "a", "answers": [{"text": "Nobel Prize"}, {"text": "the prize"}]},
      {"id": "b", "answers": [{"text": "1867"}]},
      {"id": "c", "answers": [{"text": "Paris"}]}]}]}]
  # a: exact via gold 2 ("prize" vs "prize"); b: F1 0 ; c: missing -> 0.
  out = se.evaluate_v1(data, {"a": "prize", "b": "1868"})
  assert out["exact_match"] == pytest.approx(100 / 3)
  assert out["f1"] == pytest.approx(100 / 3)


def test_squad_v2_official_threshold_search():
  data = [{"paragraphs": [{"qas": [
      {"id": "h1", "answers": [{"text": "Paris"}]},
      {"id": "h2", "answers": [{"text": "red car"}]},
      {"id": "n1", "answers": []}]}]}]
  preds = {"h1": "Paris", "h2": "car", "n1": "Lyon"}
  na = {"h1": -3.0, "h2": 1.0, "n1": 2.0}
  out = se.evaluate_v2(data, preds, na, na_prob_thresh=0.0)
  # At threshold 0: h1 answered (exact 1), h2 abstains (0), n1 abstains (1): EM 2/3.
  assert out["exact"] == pytest.approx(200 / 3)
  # F1 at threshold 0: h1 1, h2 0 (abstained), n1 1.
  assert out["f1"] == pytest.approx(200 / 3)
  assert out["HasAns_exact"] == pytest.approx(50.0) and out["NoAns_exact"] == pytest.approx(100.0)
  # Sweep: answering h2 too (threshold 1.0) adds its F1 2/3 -> (1 + 2/3 + 1) / 3.
  assert out["best_f1"] == pytest.approx(100 * (8 / 3) / 3)
  assert out["best_f1_thresh"] == pytest.approx(1.0)
  assert out["best_exact"] == pytest.approx(200 / 3) and out["best_exact_thresh"] == -3.0
  # Empty prediction against empty gold scores 1 in v2, 0 against an answer.
  assert se.compute_f1("", "") == 1 and se.compute_f1("Paris", "") == 0


@pytest.mark.parametrize("seed", range(40))
def test_squad_v2_best_scores_are_the_scores_at_their_thresholds(seed):
  """Before: null odds all below 0 with abstaining best reported best_exact (every question
  abstains) at best_exact_thresh 0.0, where every question is answered and `exact` differs; tied
  odds counted a score between two questions no threshold separates."""
  rng = random.Random(seed)
  qas, preds, na = [], {}, {}
  for i in range(rng.randint(1, 8)):
    gold = rng.choice(["Paris", "red car", ""])
    qas.append({"id": f"q{i}", "answers": [{"text": gold}] if gold else []})
    preds[f"q{i}"] = rng.choice(["Paris", "car", "red car", "Lyon"])
    na[f"q{i}"] = float(rng.choice([-3, -2, -1, -0.5, 0, 0.5, 2]))
  data = [{"paragraphs": [{"qas": qas}]}]
  out = se.evaluate_v2(data, preds, na)
  for key in ("exact", "f1"):
    at_best = se.evaluate_v2(data, preds, na, na_prob_thresh=out[f"best_{key}_thresh"])
    assert at_best[key] == pytest.approx(out[f"best_{key}"]), (key, out)
    for thresh in sorted(set(na.values())) + [-10.0]:  # no threshold does better
      assert se.evaluate_v2(data, preds, na, na_prob_thresh=thresh)[key] <= out[f"best_{key}"] + 1e-9


def test_squad_v2_abstaining_everywhere_is_a_threshold_below_every_null_odds():
  data = [{"paragraphs": [{"qas": [{"id": "h", "answers": [{"text": "Paris"}]},
                                   {"id": "n", "answers": []}]}]}]
  out = se.evaluate_v2(data, {"h": "Lyon", "n": "Lyon"}, {"h": -1.0, "n": -2.0},
                       na_prob_thresh=0.0)
  assert out["exact"] == 0.0  # both answered at 0.0
  assert out["best_exact"] == 50.0 and out["best_exact_thresh"] < -2.0


def _perfect(task_name, tmp_path):
  """(task, examples, predictions) of a dev file in the task's official layout, every example
  predicted right."""
  from bert_keras.tasks.registry import get_task  # pylint: disable=import-outside-toplevel
  from bert_keras.configs.tasks import get_task_config  # pylint: disable=import-outside-toplevel
  from . import task_fixtures as fx  # pylint: disable=import-outside-toplevel
  from .test_glue import write_glue  # pylint: disable=import-outside-toplevel
  task = get_task(get_task_config(task_name))
  if task_name.startswith("glue/"):
    data = write_glue(str(tmp_path), task_name)
  elif task_name == "conll2003":
    data = fx.write_conll(tmp_path)
  elif task_name == "swag":
    fx.write_swag(tmp_path / "val.csv")
    data = str(tmp_path)
  else:
    data = fx.write_json(tmp_path, f"dev-{task.file_version}.json",
                         fx.SQUAD_V1 if task_name == "squad_v1" else fx.SQUAD_V2)
  examples = task.read_examples(data, task.eval_splits[0])
  if task_name == "conll2003":
    return task, examples, [{"gold": e.tags, "predicted": e.tags} for e in examples]
  if task_name.startswith("squad"):
    answers = {e.qas_id: e.answers[0] if e.answers else "" for e in examples}
    return task, examples, {"predictions": answers, "best_non_null": answers,
                            "null_odds": {k: -1.0 if v else 1.0 for k, v in answers.items()}}
  return task, examples, [{"prediction": e.label} for e in examples]


@pytest.mark.parametrize("task_name", ["glue/mrpc", "glue/cola", "glue/stsb", "conll2003", "swag",
                                       "squad_v1", "squad_v2"])
def test_every_task_reports_its_metrics_on_one_scale(task_name, tmp_path):
  """One convention, the official scripts': a perfect prediction scores 100 on every metric of
  every task (before: 1.0 for GLUE, CoNLL and SWAG beside SQuAD's 100)."""
  task, examples, predictions = _perfect(task_name, tmp_path)
  scores = task.evaluate(examples, predictions)
  rated = {k: v for k, v in scores.items() if not k.endswith(("total", "_thresh"))}
  assert rated and all(v == pytest.approx(100.0) for v in rated.values()), scores
