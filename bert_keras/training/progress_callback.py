"""Keras `fit` / `predict` progress through the project's one progress line (progress.py): a step
counter over the whole run (all epochs), rate and ETA, at a steady cadence in seconds. Replaces
Keras' own per-epoch (verbose=2) or per-step (verbose=1) output."""

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

  def on_train_begin(self, logs=None):
    steps, epochs = self.params.get("steps") or 0, self.params.get("epochs") or 1
    self._progress = Progress("train", steps * epochs, stream=self.stream)

  def on_epoch_begin(self, epoch, logs=None):
    self._epoch = epoch

  def on_train_batch_end(self, batch, logs=None):
    step = self._epoch * (self.params.get("steps") or 0) + batch + 1
    self._progress.update(step, lambda: {"loss": float((logs or {}).get("loss", np.nan)),
                                         "lr": self.learning_rate()})

  def on_train_end(self, logs=None):
    self._progress.close()

  def learning_rate(self) -> float:
    """The optimizer's current rate (its schedule at the next update)."""
    return float(np.asarray(self.model.optimizer.learning_rate))

  # === predict ===

  def on_predict_begin(self, logs=None):
    self._progress = Progress(self.label, self.params.get("steps") or 0, stream=self.stream)

  def on_predict_batch_end(self, batch, logs=None):
    self._progress.update(batch + 1)

  def on_predict_end(self, logs=None):
    self._progress.close()
