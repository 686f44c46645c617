"""Shared machinery for single-sentence and sentence-pair classification/regression tasks
(GLUE, the embedded polarity and lee_similarity sets): examples, packing, head, loss, metrics."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import keras
import numpy as np

from bert_keras.errors import UserError
from bert_keras.tasks import metrics as metrics_lib
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_feature_classifier import BertFeatureClassifier
from bert_keras.tasks.packing import pack_batch
from bert_keras.tasks.task import Features, Task


@dataclasses.dataclass
class ClassificationExample:
  """One row: `guid` names its origin ("dev.tsv:17"); label is a class name, a float, or None."""

  guid: str
  text_a: str
  text_b: str | None = None
  label: Any = None


class ClassificationTask(Task):
  """Subclasses set `labels` (None = regression), `metric_names`, `is_pair`, `positive_label`."""

  labels: tuple | None = None
  metric_names: tuple = ("accuracy",)
  positive_label: str | None = None
  is_pair: bool = False

  def __init__(self, config):
    super().__init__(config)
    self.label_names = list(self.labels) if self.labels is not None else None

  @property
  def is_regression(self) -> bool:
    return self.labels is None

  def check_label(self, label: str, where: str) -> Any:
    """Parses a raw label cell; UserError names the file:line and the allowed labels."""
    if self.is_regression:
      try:
        return float(label)
      except ValueError:
        raise UserError(f"{where}: label {label!r} is not a number") from None
    if label not in self.labels:
      raise UserError(f"{where}: label {label!r} is not one of {list(self.labels)}")
    return label

  def prepare_labels(self, train_examples, eval_examples) -> None:
    """Train and dev must use the same label set (a mismatch means mixed-up files)."""
    if self.is_regression:
      return
    train = {e.label for e in train_examples if e.label is not None}
    for split, examples in eval_examples.items():
      dev = {e.label for e in examples if e.label is not None}
      if train and dev - train:
        raise UserError(f"{self.name}: labels differ between train {sorted(train)} and {split} "
                        f"{sorted(dev)}: {sorted(dev - train)} never occur in train")

  def has_labels(self, examples) -> bool:
    return all(e.label is not None for e in examples)

  def make_features(self, examples: Sequence[ClassificationExample], tokenizer,
                    training: bool) -> Features:
    segments_a = tokenizer.encode([e.text_a for e in examples])
    segments_b = (tokenizer.encode([e.text_b or "" for e in examples]) if self.is_pair else None)
    inputs = pack_batch(segments_a, segments_b, self.config.max_seq_length, tokenizer.cls_id,
                        tokenizer.sep_id, tokenizer.pad_id)
    labels = None
    if examples and all(e.label is not None for e in examples):
      if self.is_regression:
        labels = np.array([float(e.label) for e in examples], np.float32)[:, None]
      else:
        index = {name: i for i, name in enumerate(self.label_names)}
        labels = np.array([index[e.label] for e in examples], np.int32)
    return Features(inputs=inputs, labels=None if labels is None else {"logits": labels},
                    meta=[e.guid for e in examples])

  def build_model(self, encoder: keras.Model) -> keras.Model:
    num_classes = 1 if self.is_regression else len(self.label_names)
    if self.config.approach == "feature_based":
      return BertFeatureClassifier(
          encoder, num_classes, feature_layers=self.config.feature_layers,
          lstm_units=self.config.lstm_units, dropout_rate=self.config.dropout_rate,
          name=f"{self.name.replace('/', '_')}_feature_classifier")
    return BertClassifier(encoder, num_classes, dropout_rate=self.config.dropout_rate,
                          name=f"{self.name.replace('/', '_')}_classifier")

  def compile_kwargs(self) -> dict:
    if self.is_regression:
      return {"loss": {"logits": keras.losses.MeanSquaredError()}}
    return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
            "metrics": {"logits": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]}}

  def postprocess(self, examples, features, outputs) -> list[dict]:
    logits = np.asarray(outputs["logits"], np.float32)
    predictions = []
    for example, row in zip(examples, logits):
      if self.is_regression:
        predictions.append({"guid": example.guid, "prediction": float(row[0])})
      else:
        probs = np.exp(row - row.max())
        probs /= probs.sum()
        predictions.append({"guid": example.guid, "prediction": self.label_names[int(row.argmax())],
                            "probabilities": [float(p) for p in probs]})
    return predictions

  def evaluate(self, examples, predictions) -> dict:
    if self.is_regression:
      gold = [float(e.label) for e in examples]
      pred = [p["prediction"] for p in predictions]
      return {name: metrics_lib.REGRESSION_METRICS[name](gold, pred)
              for name in self.metric_names}
    index = {name: i for i, name in enumerate(self.label_names)}
    gold = [index[e.label] for e in examples]
    pred = [index[p["prediction"]] for p in predictions]
    options = {"f1": {"positive": index.get(self.positive_label)}}
    return {name: metrics_lib.CLASSIFICATION_METRICS[name](gold, pred, **options.get(name, {}))
            for name in self.metric_names}

  def task_info(self, metrics: Mapping[str, Any] | None = None) -> dict:
    info = super().task_info(metrics)
    info.update(num_segments=2 if self.is_pair else 1, regression=self.is_regression,
                approach=self.config.approach)
    return info
