"""The demo's pretraining run, repeated with Model Garden's BERT (issue 4): is NSP's level ours?

Trains tf-models-official's `BertPretrainerV2` (`BertEncoderV2`, the masked-LM head and a
`ClassificationHead` for next-sentence prediction) on the demo's examples with the demo's recipe:
`bert_tiny` (2 layers, H=128, 2 heads, FFN 512; initial weights of std --initializer_range),
dropout 0, batch 32, AdamW (weight decay 0.01, not on LayerNorm weights or biases; epsilon 1e-6;
clipping by global norm 1.0), lr 2e-3 with 200 warmup steps then linear decay to 0 at step 2000,
loss = masked-LM mean + NSP mean. The held-out
split is the pretrainer's (`split_heldout`: every 20th record of the sorted shards). Prints one JSON
line per evaluation: held-out masked-LM accuracy and loss, NSP accuracy and loss.

Runs in Model Garden's own virtualenv (the benchmark's, TF 2.20 with tf_keras):

  bench/.venvs/tfm/bin/python studies/pretraining_evidence/peer_model_garden.py \
      --examples 'demo_out/pipeline/pretraining_examples/examples/pretraining-*' --vocab_size 8121
"""

from __future__ import annotations

import argparse
import glob
import json
import time

import numpy as np
import tensorflow as tf
import tf_keras
from official.nlp.modeling import layers, models, networks

SEQ, PRED = 128, 20
FEATURES = {"input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
            "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
            "masked_lm_positions": tf.io.FixedLenFeature([PRED], tf.int64),
            "masked_lm_ids": tf.io.FixedLenFeature([PRED], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([PRED], tf.float32),
            "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64)}


def read(files, heldout: bool, every: int = 20):
  """The pretrainer's split: record i (over the sorted shards) is held out when i % 20 == 19."""
  ds = tf.data.TFRecordDataset(files).enumerate()
  keep = (lambda i, _: i % every == every - 1) if heldout else (lambda i, _: i % every != every - 1)
  parse = lambda _, r: {k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v
                        for k, v in tf.io.parse_single_example(r, FEATURES).items()}
  return ds.filter(keep).map(parse)


class WarmupLinearDecay(tf_keras.optimizers.schedules.LearningRateSchedule):
  """lr * (step + 1) / warmup during the warmup, then linear decay to 0 at `total` (the demo's)."""

  def __init__(self, peak: float, warmup: int, total: int):
    super().__init__()
    self.peak, self.warmup, self.total = peak, warmup, total

  def __call__(self, step):
    step = tf.cast(step, tf.float32)
    warm = self.peak * (step + 1.0) / self.warmup
    decay = self.peak * tf.maximum(0.0, (self.total - step) / (self.total - self.warmup))
    return tf.where(step < self.warmup, warm, decay)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--examples", required=True, help="the demo's pretraining TFRecords (glob)")
  parser.add_argument("--vocab_size", type=int, required=True)
  parser.add_argument("--steps", type=int, default=2000)
  parser.add_argument("--warmup", type=int, default=200)
  parser.add_argument("--lr", type=float, default=2e-3)
  parser.add_argument("--batch", type=int, default=32)
  parser.add_argument("--eval_every", type=int, default=400)
  parser.add_argument("--seed", type=int, default=42)
  parser.add_argument("--initializer_range", type=float, default=0.02,
                      help="std of the initial weights (BERT's 0.02; the demo's bert_tiny 0.05)")
  args = parser.parse_args()
  files = sorted(glob.glob(args.examples))
  if not files:
    raise SystemExit(f"error: no files match {args.examples!r}")

  tf_keras.utils.set_random_seed(args.seed)
  init = tf_keras.initializers.TruncatedNormal(stddev=args.initializer_range)
  gelu = lambda x: tf_keras.activations.gelu(x, approximate=False)
  encoder = networks.BertEncoderV2(
      vocab_size=args.vocab_size, hidden_size=128, num_layers=2, num_attention_heads=2,
      inner_dim=512, inner_activation=gelu, max_sequence_length=512, type_vocab_size=2,
      output_dropout=0.0, attention_dropout=0.0, initializer=init)
  model = models.BertPretrainerV2(
      encoder_network=encoder, mlm_activation=gelu, mlm_initializer=init,
      classification_heads=[layers.ClassificationHead(inner_dim=128, num_classes=2,
                                                      initializer=init, name="next_sentence")])
  optimizer = tf_keras.optimizers.experimental.AdamW(
      WarmupLinearDecay(args.lr, args.warmup, args.steps), weight_decay=0.01, beta_1=0.9,
      beta_2=0.999, epsilon=1e-6, global_clipnorm=1.0)
  optimizer.exclude_from_weight_decay(var_names=["LayerNorm", "layer_norm", "bias"])

  def sums(batch, training):
    out = model({"input_word_ids": batch["input_ids"], "input_mask": batch["input_mask"],
                 "input_type_ids": batch["segment_ids"],
                 "masked_lm_positions": batch["masked_lm_positions"]}, training=training)
    w = batch["masked_lm_weights"]
    mlm = tf_keras.losses.sparse_categorical_crossentropy(
        batch["masked_lm_ids"], out["mlm_logits"], from_logits=True)
    nsp_labels = batch["next_sentence_labels"][:, 0]
    nsp = tf_keras.losses.sparse_categorical_crossentropy(
        nsp_labels, out["next_sentence"], from_logits=True)
    mlm_hit = tf.cast(tf.equal(tf.argmax(out["mlm_logits"], -1, output_type=tf.int32),
                               batch["masked_lm_ids"]), tf.float32)
    nsp_hit = tf.cast(tf.equal(tf.argmax(out["next_sentence"], -1, output_type=tf.int32),
                               nsp_labels), tf.float32)
    return {"mlm_loss_sum": tf.reduce_sum(mlm * w), "mlm_weight": tf.reduce_sum(w),
            "mlm_correct": tf.reduce_sum(mlm_hit * w), "nsp_loss_sum": tf.reduce_sum(nsp),
            "nsp_correct": tf.reduce_sum(nsp_hit), "nsp_count": tf.cast(tf.size(nsp), tf.float32)}

  @tf.function(jit_compile=True)
  def train_step(batch):
    with tf.GradientTape() as tape:
      s = sums(batch, True)
      loss = s["mlm_loss_sum"] / s["mlm_weight"] + s["nsp_loss_sum"] / s["nsp_count"]
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

  eval_sums = tf.function(lambda batch: sums(batch, False))
  train = (read(files, False).shuffle(10000, seed=args.seed).repeat()
           .batch(args.batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE))
  heldout = list(read(files, True).batch(64))
  labels = np.concatenate([h["next_sentence_labels"].numpy()[:, 0] for h in heldout])
  majority = round(float(max(labels.mean(), 1 - labels.mean())), 4)
  start = time.time()
  for step, batch in enumerate(train.take(args.steps), 1):
    train_step(batch)
    if step % args.eval_every == 0 or step == args.steps:
      total = {}
      for held in heldout:
        for k, v in eval_sums(held).items():
          total[k] = total.get(k, 0.0) + float(v)
      print(json.dumps({
          "step": step, "sec": round(time.time() - start),
          "heldout_examples": int(total["nsp_count"]),
          "mlm_accuracy": round(total["mlm_correct"] / total["mlm_weight"], 4),
          "mlm_loss": round(total["mlm_loss_sum"] / total["mlm_weight"], 4),
          "nsp_accuracy": round(total["nsp_correct"] / total["nsp_count"], 4),
          "nsp_loss": round(total["nsp_loss_sum"] / total["nsp_count"], 4),
          "nsp_majority": majority}), flush=True)


if __name__ == "__main__":
  main()
