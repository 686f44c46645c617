"""Trains a tiny BertPretrainer with --optimizer=lamb through build_optimizer and the Trainer.

`run(...)` is imported by test_lamb.py, test_lamb_accumulation.py and test_lamb_mixed_precision.py
(default strategy). Run as `python -m tests.training.lamb_probe DATA_GLOB OUT_DIR` it configures
two logical CPUs (which must happen before TensorFlow initialises, hence a separate process) and
prints one JSON line comparing two LAMB steps under a two-replica MirroredStrategy with the same
steps under the default strategy, twice: "replicas", each replica taking its 4 examples at once, and
"accumulation", each accumulating 2 micro-batches of 2.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import tensorflow as tf

BATCH = 8
STEPS = 2


def config(pattern: str):
  """A one-layer model without dropout (deterministic steps), LAMB with a weight decay that bites
  and a clip norm low enough to be active."""
  from bert_keras.configs.training import TrainingConfig  # pylint: disable=g-import-not-at-top
  from tests.training.pretraining_runs import TINY_MODEL  # pylint: disable=g-import-not-at-top
  return TrainingConfig.from_flat(
      input_files=pattern, model="bert_tiny", optimizer="lamb",
      model_overrides=dict(TINY_MODEL, num_layers=1, dropout_rate=0.0, attention_dropout_rate=0.0),
      max_seq_length=32, max_predictions_per_seq=5, train_batch_size=BATCH, num_train_steps=10,
      num_warmup_steps=0, learning_rate=1e-2, weight_decay_rate=0.1, clip_global_norm=0.5)


def run(strategy, cfg, model_dir: str, steps: int = STEPS, first_gradients: bool = False,
        accum: int = 1, prepare=None) -> dict:
  """Builds model and optimizer (build_optimizer) under `strategy`, trains `steps` steps with the
  Trainer and returns {"optimizer": class name, "initial"/"final": weights by path, "slots":
  optimizer variables by path (name scope dropped), "checkpoint": the Trainer's last checkpoint}.
  For a mixed `cfg.runtime.mixed_precision`, set that global policy (precision.set_precision) before the call.

  first_gradients: also "gradients" (by path) and "unused" (paths), the first step's gradients as
  the Trainer's own code computes them before its all-reduce and clipping (default strategy only;
  loss-scaled under mixed_float16). accum: the Trainer's gradient_accumulation_steps (each step
  still takes BATCH examples). prepare(trainer): called once the Trainer (and so the optimizer) is
  built, before the first gradients and the training.
  """
  # pylint: disable=g-import-not-at-top,protected-access
  import keras
  from bert_keras.training.pretrain import build_optimizer, build_pretrainer
  from bert_keras.training.pretraining_input import make_dataset
  from bert_keras.training.pretraining_task import PretrainingTask
  from bert_keras.training.trainer import Trainer

  keras.utils.set_random_seed(1)  # the same initial weights in every run
  with strategy.scope():
    model = build_pretrainer(cfg)
    optimizer = build_optimizer(cfg)
  task = PretrainingTask(cfg.model.objective)
  run = cfg.override(output_dir=model_dir, train_batch_size=BATCH,
                     gradient_accumulation_steps=accum, checkpoint_every=100, log_every=100, seed=3)
  trainer = Trainer(strategy, model, optimizer, task, run)
  if prepare is not None:
    prepare(trainer)
  data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                        skip_batches=skip)
  weights = lambda: {v.path: np.asarray(v.numpy()) for v in model.trainable_variables}
  out = {"optimizer": type(optimizer).__name__, "initial": weights()}
  if first_gradients:
    batch = next(iter(data(tf.distribute.InputContext(), 0)))
    flat = {k: tf.reshape(v, [-1] + v.shape.as_list()[2:]) for k, v in batch.items()}
    grads, _ = trainer._accumulated_grads(batch, task.counts(flat))
    out["gradients"] = {v.path: np.asarray(g.numpy())
                        for g, v in zip(grads, model.trainable_variables)}
    out["unused"] = sorted(trainer._unused_paths)
  trainer.train(data, steps)
  out["final"] = weights()
  out["slots"] = {v.path.split("/", 1)[-1]: np.asarray(v.numpy()) for v in optimizer.variables}
  out["checkpoint"] = tf.train.latest_checkpoint(model_dir)
  return out


def main(pattern: str, out_dir: str):
  cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
  cfg = config(pattern)
  default = run(tf.distribute.get_strategy(), cfg, os.path.join(out_dir, "default"))
  # One MirroredStrategy for the whole process: two over the same devices would reuse collective
  # instance keys and abort each other's all-reduces.
  mirrored_strategy = tf.distribute.MirroredStrategy(cpus[:2])
  diff = lambda a, b: max(float(np.max(np.abs(a[k] - b[k]))) for k in a)
  result = {"num_replicas": mirrored_strategy.num_replicas_in_sync,
            "moved": diff(default["final"], default["initial"])}
  for mode, accum in (("replicas", 1), ("accumulation", 2)):
    mirrored = run(mirrored_strategy, cfg, os.path.join(out_dir, f"mirrored-accum{accum}"),
                   accum=accum)
    result[mode] = {"optimizers": [default["optimizer"], mirrored["optimizer"]],
                    "weights_diff": diff(mirrored["final"], default["final"]),
                    "slots_diff": diff(mirrored["slots"], default["slots"])}
  print(json.dumps(result))


if __name__ == "__main__":
  tf.config.set_logical_device_configuration(
      tf.config.list_physical_devices("CPU")[0],
      [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
  main(*sys.argv[1:])
