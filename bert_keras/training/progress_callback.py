"""Keras `fit` / `predict` progress through the project's one progress line (bert_keras/progress.py).

Only batch *begin* hooks: a batch *end* hook turns off Keras' asynchronous callback dispatch and waits
for every step; the loss is read only when a line is printed.
"""

from __future__ import annotations

import keras
import numpy as np

from bert_keras.progress import Progress


class ProgressCallback(keras.callbacks.Callback):
  """fit: `train step k/n ... loss= lr=`; predict: `<label> step k/n ...` (batches)."""

  def __init__(self, label: str = "predict", stream=None):
    super().__init__()
    self.label = label
    self.stream = stream
    self._progress = None
    self._epoch = 0

  # === fit ===

  def _steps(self) -> int:
    return self.params.get("steps") or 0

  def on_train_begin(self, logs=None):
    self._progress = Progress("train", self._steps() * (self.params.get("epochs") or 1),
                              stream=self.stream)

  def on_epoch_begin(self, epoch, logs=None):
    self._epoch = epoch

  def on_train_batch_begin(self, batch, logs=None):
    if batch:  # the epoch's steps before this one are done
      loss = lambda: self.model.get_metrics_result().get("loss")  # the epoch's running mean
      self._progress.update(self._epoch * self._steps() + batch, lambda: self._values(loss()))

  def on_epoch_end(self, epoch, logs=None):
    self._progress.update((epoch + 1) * self._steps(), lambda: self._values((logs or {}).get("loss")))

  def on_train_end(self, logs=None):
    self._progress.close()

  def _values(self, loss) -> dict:
    return {"lr": self._learning_rate(), **({} if loss is None else {"loss": float(np.asarray(loss))})}

  def _learning_rate(self) -> float:
    """The optimizer's current rate (its schedule at the next update)."""
    return float(np.asarray(self.model.optimizer.learning_rate))

  # === predict ===

  def on_predict_begin(self, logs=None):
    self._progress = Progress(self.label, self._steps(), stream=self.stream)

  def on_predict_batch_begin(self, batch, logs=None):
    if batch:
      self._progress.update(batch)

  def on_predict_end(self, logs=None):
    self._progress.update(self._steps())
    self._progress.close()
