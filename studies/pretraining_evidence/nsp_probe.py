"""Probes of next-sentence prediction (issue 4): is it a bug, or does NSP just need more training?

Same reader, model and loss sums as run_pretraining (`pretraining_input.make_dataset`,
`BertPretrainer`, `PretrainingTask`), in a plain loop so the two loss terms can be weighted:

  # 1. overfit: NSP on the first N training examples, evaluated on the same N (a bug keeps it at 50%)
  python studies/pretraining_evidence/nsp_probe.py --input_files 'data64/train/pretraining-*' --overfit 256 \
      --steps 400 --lr 1e-3 --warmup 0
  # 2. held-out NSP every --every steps, optionally without the masked-LM term (--mlm_weight 0)
  python studies/pretraining_evidence/nsp_probe.py --input_files 'data64/train/pretraining-*' \
      --eval_input_files 'data64/heldout/pretraining-*' --steps 600 --lr 2e-3 --mlm_weight 0

Prints one JSON line per evaluation: step, seconds, masked-LM accuracy, NSP accuracy and loss.
"""

from __future__ import annotations

import argparse
import json
import time

import keras
import numpy as np
import tensorflow as tf

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.training import pretraining_input
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.configs.model import get_model_config
from bert_keras.configs.training import TrainingConfig


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--input_files", required=True,
                      help="training TFRecords (comma-separated globs)")
  parser.add_argument("--eval_input_files",
                      help="held-out TFRecords (comma-separated globs); not with --overfit")
  parser.add_argument("--overfit", type=int, default=0, help="train and evaluate on the first N")
  parser.add_argument("--seq", type=int, default=64)
  parser.add_argument("--pred", type=int, default=10)
  parser.add_argument("--batch", type=int, default=32)
  parser.add_argument("--steps", type=int, default=600)
  parser.add_argument("--lr", type=float, default=2e-3)
  parser.add_argument("--warmup", type=int, default=100)
  parser.add_argument("--mlm_weight", type=float, default=1.0)
  parser.add_argument("--every", type=int, default=100)
  parser.add_argument("--heldout_batches", type=int, default=21, help="of 64 examples")
  parser.add_argument("--model", default="bert_tiny", help="model preset")
  parser.add_argument("--model_overrides", default='{"vocab_size": 8121}', help="JSON object")
  args = parser.parse_args()

  keras.utils.set_random_seed(0)
  read = lambda pattern, batch, training: pretraining_input.make_dataset(
      TrainingConfig.from_flat(max_seq_length=args.seq, max_predictions_per_seq=args.pred,
                               train_batch_size=batch, eval_batch_size=batch, seed=0),
      pattern, training=training)
  first = lambda batch: {k: v[0] for k, v in batch.items()}  # drop the accumulation axis
  if args.overfit:
    fixed = first(next(iter(read(args.input_files, args.overfit, False))))
    rng = np.random.default_rng(0)
    pick = lambda index: {k: tf.gather(v, index) for k, v in fixed.items()}  # one index per step
    train_batches = (pick(rng.choice(args.overfit, args.batch, replace=False))
                     for _ in range(args.steps))
    eval_batches = [fixed]
  else:
    train_batches = (first(b) for b in read(args.input_files, args.batch, True).take(args.steps))
    eval_batches = [first(b) for b in read(args.eval_input_files, 64, False).take(args.heldout_batches)]

  encoder = BertEncoder.from_model_config(
      get_model_config(args.model, **json.loads(args.model_overrides)))
  model, task = BertPretrainer(encoder), PretrainingTask()
  decay = keras.optimizers.schedules.PolynomialDecay(args.lr, args.steps, 0.0)
  schedule = lambda step: tf.where(step < args.warmup,
                                   args.lr * tf.cast(step + 1, tf.float32) / max(args.warmup, 1),
                                   decay(step))
  optimizer = keras.optimizers.AdamW(learning_rate=lambda: schedule(optimizer.iterations),
                                     weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)

  @tf.function
  def train_step(features):
    with tf.GradientTape() as tape:
      sums = task.loss_sums(features, model(task.model_inputs(features), training=True))
      loss = (args.mlm_weight * sums["mlm_loss_sum"] / sums["mlm_weight"]
              + sums["nsp_loss_sum"] / sums["nsp_count"])
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

  @tf.function
  def eval_sums(features):
    return task.loss_sums(features, model(task.model_inputs(features), training=False))

  start = time.time()
  for step, features in enumerate(train_batches, 1):
    train_step(features)
    if step % args.every == 0 or step == args.steps:
      total = {}
      for batch in eval_batches:
        for k, v in eval_sums(batch).items():
          total[k] = total.get(k, 0.0) + float(v)
      print(json.dumps({"step": step, "sec": round(time.time() - start),
                        "mlm_acc": round(total["mlm_correct"] / total["mlm_weight"], 4),
                        "nsp_acc": round(total["nsp_correct"] / total["nsp_count"], 4),
                        "nsp_loss": round(total["nsp_loss_sum"] / total["nsp_count"], 4)}),
            flush=True)


if __name__ == "__main__":
  main()
