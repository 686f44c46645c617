"""Threshold checks behind the Evaluator's blessing."""

import pytest

from bert_keras.errors import UserError
from components.evaluator.blessing import check_thresholds, normalize_thresholds


def test_lower_and_upper_bounds():
  metrics = {"accuracy": 0.8, "loss": 0.3}
  assert check_thresholds(metrics, {"accuracy": 0.7})[0]
  assert not check_thresholds(metrics, {"accuracy": 0.81})[0]
  blessed, passed, failed = check_thresholds(
      metrics, {"accuracy": {"lower_bound": 0.5}, "loss": {"upper_bound": 0.2}})
  assert not blessed
  assert passed == ["accuracy=0.8 >= 0.5"] and failed == ["loss=0.3 <= 0.2"]
  assert check_thresholds(metrics, {"accuracy": 0.8})[0]  # the bound itself passes


def test_missing_or_nan_metric_never_blesses():
  blessed, _, failed = check_thresholds({"accuracy": 0.9}, {"acuracy": 0.5})
  assert not blessed and failed[0].startswith("acuracy missing")
  assert not check_thresholds({"pearson": float("nan")}, {"pearson": -1.0})[0]


def test_no_thresholds_blesses():
  assert check_thresholds({"accuracy": 0.1}, {}) == (True, [], [])


@pytest.mark.parametrize("bad", [{"accuracy": "high"}, {"accuracy": {"lower": 0.5}},
                                 {"accuracy": {"lower_bound": True}}, {"accuracy": {}}])
def test_malformed_thresholds_are_user_errors(bad):
  with pytest.raises(UserError, match="accuracy"):
    normalize_thresholds(bad)
