"""Subprocess probe: N micro-batches of B vs one batch of N*B under several strategies.

Run as `python -m tests.training.accumulation_probe DATA_GLOB OUT_DIR`; prints one JSON line
{strategy: max |w_accum - w_big| over all weights, ...}. It configures two logical CPUs first, so a
two-replica MirroredStrategy is tested too (that must happen before TensorFlow initialises, hence a
separate process).
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
from configs.training import TrainingConfig

STEPS = 3
BATCH = 8


def train(strategy, config, accum, model_dir, objective):
  keras.utils.set_random_seed(1)
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(objective), model_dir=model_dir,
                    global_batch_size=BATCH, gradient_accumulation_steps=accum,
                    clip_global_norm=config.clip_global_norm, checkpoint_every=100, log_every=100)
  data = lambda ctx, skip: make_dataset(
      config.input_files, seq_length=32, max_predictions=5, batch_size=BATCH,
      gradient_accumulation_steps=accum, objective=objective, input_context=ctx, seed=3,
      skip_batches=skip)
  trainer.train(data, STEPS)
  return [np.asarray(v.numpy()) for v in model.weights]


def main(pattern, out_dir):
  results = {}
  cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
  strategies = {
      "default": tf.distribute.get_strategy,
      "one_device": lambda: tf.distribute.OneDeviceStrategy("/cpu:0"),
      "mirrored_2_replicas": lambda: tf.distribute.MirroredStrategy(cpus[:2]),
  }
  for objective in ("mlm_nsp", "ltr"):
    config = TrainingConfig(
        input_files=pattern, model_preset="bert_tiny", objective=objective,
        model_overrides=dict(vocab_size=128, num_layers=2, hidden_size=32, num_heads=2,
                             intermediate_size=64, max_position_embeddings=64, dropout_rate=0.0,
                             attention_dropout_rate=0.0),
        max_seq_length=32, max_predictions_per_seq=5, train_batch_size=BATCH,
        num_train_steps=10, num_warmup_steps=1, learning_rate=1e-2,
        clip_global_norm=0.5)  # a low norm so that clipping is active and tested too
    for name, make in strategies.items():
      if objective == "ltr" and name != "default":
        continue  # the step code is objective-independent; one strategy suffices
      big = train(make(), config, 1, os.path.join(out_dir, f"{objective}-{name}-big"), objective)
      small = train(make(), config, 4, os.path.join(out_dir, f"{objective}-{name}-acc"), objective)
      moved = max(float(np.max(np.abs(a - b))) for a, b in zip(big, small))
      results[f"{objective}/{name}"] = moved
      print(objective, name, moved, file=sys.stderr, flush=True)
  print(json.dumps(results))


if __name__ == "__main__":
  main(sys.argv[1], sys.argv[2])
