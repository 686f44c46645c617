"""Subprocess probe: two-replica MirroredStrategy with gradient accumulation vs one big batch.

Run as `python -m tests.training.mirrored_accumulation_probe DATA_GLOB OUT_DIR`; prints one JSON
line {objective: max |w_mirrored_accum - w_one_device_big| over all weights}. Two logical CPUs must
be configured before TensorFlow initialises, hence a separate process.
"""

from __future__ import annotations

import json
import os
import sys

import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])

import keras  # pylint: disable=g-import-not-at-top
import numpy as np

from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_input import make_dataset
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from bert_keras.configs.training import TrainingConfig

STEPS = 2
BATCH = 8  # global: 2 replicas x 2 micro-batches x 2 examples when accumulating


def train(strategy, config, accum, model_dir):
  keras.utils.set_random_seed(1)  # the same initial weights in every run
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  initial = [np.asarray(v.numpy()) for v in model.weights]
  run = config.override(output_dir=model_dir, train_batch_size=BATCH,
                        gradient_accumulation_steps=accum, checkpoint_every=100, log_every=100,
                        steps_per_execution=STEPS, seed=3)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.model.objective), run)
  data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                        skip_batches=skip)
  trainer.train(data, STEPS)
  return initial, [np.asarray(v.numpy()) for v in model.weights]


def main(pattern, out_dir):
  cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
  results = {}
  # One strategy object per kind for the whole process: two MirroredStrategy instances over the
  # same devices would reuse the same collective instance keys and abort each other's all-reduces.
  one_device = tf.distribute.OneDeviceStrategy(cpus[0])
  mirrored = tf.distribute.MirroredStrategy(cpus[:2])
  for objective in ("mlm_nsp", "ltr"):
    config = TrainingConfig.from_flat(
        input_files=pattern, model="bert_tiny", objective=objective,
        model_overrides=dict(vocab_size=128, num_layers=1, hidden_size=32, num_heads=2,
                             intermediate_size=64, max_position_embeddings=64, dropout_rate=0.0,
                             attention_dropout_rate=0.0),
        max_seq_length=32, max_predictions_per_seq=5, train_batch_size=BATCH,
        num_train_steps=10, num_warmup_steps=1, learning_rate=1e-2,
        clip_global_norm=0.5)  # low, so that clipping of the all-reduced gradient is active
    initial, big = train(one_device, config, 1,
                os.path.join(out_dir, f"{objective}-big"))
    _, accum = train(mirrored, config, 2,
                  os.path.join(out_dir, f"{objective}-mirrored-accum"))
    print(objective, "done", file=sys.stderr, flush=True)
    results[objective] = {
        "accum_vs_big": max(float(np.max(np.abs(a - b))) for a, b in zip(big, accum)),
        # How far the 2 steps moved the weights: the comparison is only meaningful if they did.
        "moved": max(float(np.max(np.abs(a - b))) for a, b in zip(big, initial)),
    }
  print(json.dumps(results))


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
