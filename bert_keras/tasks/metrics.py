"""The GLUE (Wang et al., 2018), SWAG and CoNLL-2003 (conlleval, through seqeval) metrics.

Every task reports 0-100, as the official scripts, leaderboards and the BERT paper's tables do;
the functions below keep their textbook ranges (0-1, -1..1).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.stats
import seqeval.metrics
import sklearn.metrics


def accuracy(labels: Sequence[int], predictions: Sequence[int]) -> float:
  labels, predictions = np.asarray(labels), np.asarray(predictions)
  return float(np.mean(labels == predictions)) if len(labels) else 0.0


def f1(labels: Sequence[int], predictions: Sequence[int], positive: int = 1) -> float:
  return float(sklearn.metrics.f1_score(labels, predictions, pos_label=positive,
                                        average="binary", zero_division=0))


def matthews_corrcoef(labels: Sequence[int], predictions: Sequence[int]) -> float:
  return float(sklearn.metrics.matthews_corrcoef(labels, predictions))


def pearson(labels: Sequence[float], predictions: Sequence[float]) -> float:
  if np.std(predictions) == 0 or np.std(labels) == 0:
    return 0.0  # Undefined for a constant predictor; 0 says "no linear relation".
  return float(scipy.stats.pearsonr(labels, predictions)[0])


def spearman(labels: Sequence[float], predictions: Sequence[float]) -> float:
  if np.std(predictions) == 0 or np.std(labels) == 0:
    return 0.0
  return float(scipy.stats.spearmanr(labels, predictions)[0])


REPORTED_SCALE = 100.0  # every task's metrics: 0-100 (correlations -100..100)


def _reported(metric):
  """`metric` on the reported scale."""
  return lambda *args, **kwargs: REPORTED_SCALE * metric(*args, **kwargs)


# name -> function over (labels, predictions), on the reported scale.
CLASSIFICATION_METRICS = {
    "accuracy": _reported(accuracy),
    "f1": _reported(f1),
    "matthews_corrcoef": _reported(matthews_corrcoef),
}
REGRESSION_METRICS = {
    "pearson": _reported(pearson),
    "spearman": _reported(spearman),
}


def entity_scores(gold_tags: Sequence[Sequence[str]],
                  predicted_tags: Sequence[Sequence[str]]) -> dict:
  """Entity-level micro precision, recall and F1 (conlleval) and token accuracy, 0-100; tags per
  word, IOB1 or IOB2."""
  if len(gold_tags) != len(predicted_tags):
    raise ValueError(f"{len(gold_tags)} gold sentences but {len(predicted_tags)} predicted")
  gold, pred = [list(t) for t in gold_tags], [list(t) for t in predicted_tags]
  scores = {
      "precision": seqeval.metrics.precision_score(gold, pred, zero_division=0),
      "recall": seqeval.metrics.recall_score(gold, pred, zero_division=0),
      "f1": seqeval.metrics.f1_score(gold, pred, zero_division=0),
      "token_accuracy": seqeval.metrics.accuracy_score(gold, pred) if gold else 0.0,
  }
  return {name: REPORTED_SCALE * float(value) for name, value in scores.items()}
