"""The tf.data option every training input pipeline here sets: autotuning off.

tf.data's autotuner runs a background thread per iterator. Destroying the iterator (at the end of
Keras `fit`, of `Trainer.train`, or at exit) waits for that thread, and in about half of the runs
measured here it waited 18 s, holding the GIL throughout (TensorFlow 2.21, 2 CPU cores, after
23-45 s of training: 5 of 10 fits of a toy Keras model, 1 of 3 tiny pretraining runs, 4 of 6
polarity fine-tunings, whose five epochs take 30 s). With autotuning off: 0 of 6 fits. The
pipelines keep `tf.data.AUTOTUNE` as their map parallelism and prefetch size; without the
autotuner that costs nothing measurable: the pretraining pipeline (128 tokens, dynamic masking,
batch 64, 2 cores) gave 13.6-14.0k examples/s without it, 11.7-12.2k with it; fine-tuning slices
arrays already in memory.
"""

from __future__ import annotations

import tensorflow as tf


def without_autotune(dataset: tf.data.Dataset) -> tf.data.Dataset:
  """`dataset` with tf.data's autotuner off (module docstring)."""
  options = tf.data.Options()
  options.autotune.enabled = False
  return dataset.with_options(options)
