"""What a run's TensorBoard event files hold, read back for the tests."""

import os

import tensorflow as tf


def scalar_events(logdir: str) -> dict:
  """{tag: {step: value}} of every scalar summary in the event files under `logdir`."""
  out = {}
  for name in tf.io.gfile.listdir(logdir):
    for event in tf.compat.v1.train.summary_iterator(os.path.join(logdir, name)):
      for value in event.summary.value:
        out.setdefault(value.tag, {})[event.step] = float(tf.make_ndarray(value.tensor))
  return out
