"""TensorBoard scalar events of every run (<output directory>/tensorboard)."""

from __future__ import annotations

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

TENSORBOARD_DIR = "tensorboard"  # a run's events: tensorboard --logdir <its output directory>
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"),
    data_class=summary_pb2.DATA_CLASS_SCALAR).SerializeToString()


class ScalarSummaries:
  """Scalars by name at a step, into event files under `logdir` (created on the first write)."""

  def __init__(self, logdir: str):
    self.logdir = logdir
    self._writer = None

  def write(self, step: int, scalars: dict) -> None:
    if self._writer is None:
      self._writer = tf.summary.create_file_writer(self.logdir)
    with self._writer.as_default(step=step):
      for name, value in scalars.items():
        # What tf.summary.scalar writes, without needing the tensorboard package at train time.
        tf.summary.write(name, tf.constant(value, tf.float32), metadata=_SCALAR_METADATA)

  def flush(self) -> None:
    if self._writer is not None:
      self._writer.flush()

  def close(self) -> None:
    if self._writer is not None:
      self._writer.close()
      self._writer = None
