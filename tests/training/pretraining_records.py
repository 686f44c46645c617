"""Writes small random-but-valid TFRecords in the original BERT pretraining format (test helper).

Learnable on purpose: segment B is the continuation of segment A (label 0) or a random segment
(label 1) drawn from another "document", and tokens follow a simple bigram pattern, so a tiny model
can beat chance quickly. Masking follows the 80/10/10 rule with [MASK] = 103.
`write_real_records` instead makes records of real text with scripts/create_pretraining_data.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf


def _feature(values, kind):
  if kind == "int":
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))
  return tf.train.Feature(float_list=tf.train.FloatList(value=[float(v) for v in values]))


def make_example(rng, seq_length, max_predictions, vocab_size=64, first_id=104):
  """One tf.train.Example with random masked positions; ids in [first_id, vocab_size)."""
  assert vocab_size > first_id or vocab_size > 8
  lo = first_id if vocab_size > first_id else 5
  n_real = int(rng.integers(seq_length // 2, seq_length + 1))
  len_a = (n_real - 3) // 2
  len_b = n_real - 3 - len_a
  start = int(rng.integers(lo, vocab_size))
  span = vocab_size - lo
  seq = [lo + (start - lo + i) % span for i in range(len_a + len_b)]  # "text": a counting pattern
  is_random = int(rng.integers(0, 2))
  a, b = seq[:len_a], seq[len_a:]
  if is_random:
    other = int(rng.integers(lo, vocab_size))
    b = [lo + (other - lo + 3 * i) % span for i in range(len_b)]
  tokens = [101] + a + [102] + b + [102]
  segments = [0] * (len_a + 2) + [1] * (len_b + 1)
  candidates = [i for i, t in enumerate(tokens) if t not in (101, 102)]
  n_pred = min(max_predictions, max(1, int(round(len(tokens) * 0.15))))
  positions = sorted(rng.choice(candidates, size=n_pred, replace=False).tolist())
  input_ids = list(tokens)
  labels = []
  for p in positions:
    labels.append(tokens[p])
    u = rng.random()
    input_ids[p] = 103 if u < 0.8 else (tokens[p] if u < 0.9 else int(rng.integers(lo, vocab_size)))
  pad = seq_length - len(tokens)
  pad_p = max_predictions - n_pred
  features = {
      "input_ids": _feature(input_ids + [0] * pad, "int"),
      "input_mask": _feature([1] * len(tokens) + [0] * pad, "int"),
      "segment_ids": _feature(segments + [0] * pad, "int"),
      "masked_lm_positions": _feature(positions + [0] * pad_p, "int"),
      "masked_lm_ids": _feature(labels + [0] * pad_p, "int"),
      "masked_lm_weights": _feature([1.0] * n_pred + [0.0] * pad_p, "float"),
      "next_sentence_labels": _feature([is_random], "int"),
  }
  return tf.train.Example(features=tf.train.Features(feature=features))


def write_records(directory, num_files=2, per_file=64, seq_length=32, max_predictions=5,
                  vocab_size=128, seed=0):
  """Writes num_files x per_file examples; returns the glob pattern."""
  os.makedirs(directory, exist_ok=True)
  rng = np.random.default_rng(seed)
  for i in range(num_files):
    with tf.io.TFRecordWriter(os.path.join(directory, f"part-{i:05d}.tfrecord")) as w:
      for _ in range(per_file):
        w.write(make_example(rng, seq_length, max_predictions, vocab_size).SerializeToString())
  return os.path.join(directory, "part-*.tfrecord")


def _create_pretraining_data(corpus, out, vocab_file, seq_length, max_predictions, num_shards,
                             compression="none"):
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  done = subprocess.run(
      [sys.executable, os.path.join(root, "scripts", "create_pretraining_data.py"),
       f"--input_files={corpus}", "--input_format=lines", f"--output_dir={out}",
       f"--vocab_file={vocab_file}", f"--max_seq_length={seq_length}",
       f"--max_predictions_per_seq={max_predictions}", f"--num_shards={num_shards}",
       f"--compression={compression}", "--dupe_factor=2", "--direct_running_mode=in_memory",
       "--direct_num_workers=1"],
      env=dict(os.environ, PYTHONPATH=root, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True,
      text=True, timeout=600)
  assert done.returncode == 0, done.stderr[-3000:]
  return os.path.join(out, "pretraining-*.tfrecord" + (".gz" if compression == "gzip" else ""))


def write_real_records(directory, num_documents=24, seq_length=32, max_predictions=5,
                       num_shards=2, compression="none"):
  """Real pretraining data: the first `num_documents` news articles of the embedded Lee corpus
  (one document per line) through scripts/create_pretraining_data.py (the 80/10/10 masking, a
  dupe factor of 2 instead of 10, one in-process Beam worker: ~2 s).

  The vocabulary is the real bert-base-uncased one cut to what this text needs, so that a tiny
  model's embedding stays small: its first 1000 entries ([PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102,
  [MASK] 103 at their usual ids) plus every WordPiece the full vocabulary splits the text into.
  Greedy longest-match WordPiece splits the text the same way with the cut vocabulary, since every
  piece it chose is kept and no longer prefix is added. `compression`: create_pretraining_data's
  ("gzip": `.tfrecord.gz` shards). Returns (glob of the shards, not summary.json; the vocabulary's
  size).
  """
  # pylint: disable=import-outside-toplevel
  from bert_keras.data.cached_wordpiece_tokenizer import CachedWordpieceTokenizer
  from bert_keras.resources import lee_background_path
  from bert_keras.resources import uncased_vocab_path
  os.makedirs(directory, exist_ok=True)
  corpus = os.path.join(directory, "corpus.txt")
  with open(lee_background_path(), encoding="utf-8") as f:
    lines = [line for line in f if line.strip()][:num_documents]
  with open(corpus, "w", encoding="utf-8") as f:
    f.writelines(lines)
  tokenizer = CachedWordpieceTokenizer.from_vocab_file(uncased_vocab_path())
  used = sorted({i for ids in tokenizer.encode(lines) for i in ids if i >= 1000})
  vocab = os.path.join(directory, "vocab.txt")
  with open(vocab, "w", encoding="utf-8") as f:
    f.writelines(token + "\n" for token in tokenizer.vocabulary[:1000] +
                 [tokenizer.vocabulary[i] for i in used])
  pattern = _create_pretraining_data(corpus, os.path.join(directory, "records"), vocab,
                                     seq_length, max_predictions, num_shards, compression)
  return pattern, 1000 + len(used)


SEQ, PRED = 32, 5
GZIP = tf.io.TFRecordOptions(compression_type="GZIP")


def write_shards(directory, num_files=2, per_file=16, seed=0, listed=None):
  """`.tfrecord.gz` shards named as create_pretraining_data names them and a summary.json beside
  them recording the size of those in `listed` (default: all) and the vocabulary size; returns
  their glob."""
  os.makedirs(directory, exist_ok=True)
  rng = np.random.default_rng(seed)
  names = [f"pretraining-{i:05d}-of-{num_files:05d}.tfrecord.gz" for i in range(num_files)]
  for name in names:
    with tf.io.TFRecordWriter(os.path.join(directory, name), GZIP) as writer:
      for _ in range(per_file):
        writer.write(make_example(rng, SEQ, PRED, 128).SerializeToString())
  files = [{"name": name, "bytes": os.path.getsize(os.path.join(directory, name))}
           for name in (names if listed is None else listed)]
  with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as f:
    json.dump({"files": files, "vocab_size": 128}, f)
  return os.path.join(directory, "pretraining-*.tfrecord.gz")
