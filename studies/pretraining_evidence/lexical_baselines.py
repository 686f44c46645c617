"""What the demo's examples allow without a network (issue 4): count-based MLM and NSP baselines.

On the pretrainer's held-out split (`split_heldout`: every 20th record of the sorted shards), fit on
the other records:
- masked LM: the unigram model (cross-entropy, and the accuracy of always predicting the commonest
  target, the pretrainer's `mlm_unigram_accuracy`), and a left-neighbour bigram model (counts of
  (token left of the mask as the model sees it, target), add-`alpha` smoothing towards the unigram);
- next-sentence prediction: the TF-IDF cosine between segment A and segment B (original tokens,
  masks undone), thresholded by a logistic regression, i.e. "do A and B share rare words?"; beside
  the pretrainer's padding rule (padded -> random next) and the label majority.

  python studies/pretraining_evidence/lexical_baselines.py \
      --input_files 'demo_out/pipeline/pretraining_examples/examples/pretraining-*'

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import glob
import json

import numpy as np
import tensorflow as tf
from scipy import sparse
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.linear_model import LogisticRegression

from bert_keras.data.pretraining_records import FEATURES
from bert_keras.input_checks import split_patterns
from bert_keras.training.pretraining_input import unmask
from components.pretrainer.executor import nsp_padding_rule

NAMES = tuple(FEATURES)


def read_all(files):
  """Every record as a dict of numpy arrays (and its unmasked `original_ids`), in the order
  `split_heldout` reads them."""
  spec = {name: tf.io.VarLenFeature(tf.float32 if name == "masked_lm_weights" else tf.int64)
          for name in NAMES}
  rows = []
  for record in tf.data.TFRecordDataset(files):
    parsed = {k: tf.sparse.to_dense(v)
              for k, v in tf.io.parse_single_example(record, spec).items()}
    row = {k: v.numpy() for k, v in parsed.items()}
    row["original_ids"] = unmask(parsed).numpy()  # the masking undone
    rows.append(row)
  return rows


def bag_of_ids(sequences, vocab_size: int) -> sparse.csr_matrix:
  row, col, count = [], [], []
  for i, ids in enumerate(sequences):
    unique, counts = np.unique(ids, return_counts=True)
    row += [i] * len(unique)
    col += unique.tolist()
    count += counts.tolist()
  return sparse.csr_matrix((count, (row, col)), shape=(len(sequences), vocab_size), dtype=float)


def nsp_baselines(rows, heldout: np.ndarray) -> dict:
  segments_a, segments_b, lengths = [], [], []
  for row in rows:
    ids = row["original_ids"]
    real = row["input_mask"] > 0
    segments_a.append(ids[real & (row["segment_ids"] == 0)][1:-1])  # without [CLS] and [SEP]
    segments_b.append(ids[real & (row["segment_ids"] == 1)][:-1])
    lengths.append(int(real.sum()))
  vocab_size = 1 + max(int(max(a.max(initial=0), b.max(initial=0)))
                       for a, b in zip(segments_a, segments_b))
  bags_a, bags_b = bag_of_ids(segments_a, vocab_size), bag_of_ids(segments_b, vocab_size)
  tfidf = TfidfTransformer(sublinear_tf=True).fit(sparse.vstack([bags_a[~heldout],
                                                                 bags_b[~heldout]]))
  cosine = np.asarray(tfidf.transform(bags_a).multiply(tfidf.transform(bags_b)).sum(1)).ravel()
  labels = np.array([int(row["next_sentence_labels"][0]) for row in rows])
  classifier = LogisticRegression().fit(cosine[~heldout, None], labels[~heldout])
  padded = np.array(lengths) < len(rows[0]["input_ids"])
  return {"heldout_examples": int(heldout.sum()),
          "nsp_majority": float(max(labels[heldout].mean(), 1 - labels[heldout].mean())),
          **nsp_padding_rule(labels[heldout], padded[heldout]),
          "nsp_tfidf_cosine_accuracy": float(classifier.score(cosine[heldout, None],
                                                              labels[heldout])),
          "nsp_tfidf_cosine_train_accuracy": float(classifier.score(cosine[~heldout, None],
                                                                    labels[~heldout]))}


def mlm_baselines(rows, heldout: np.ndarray, alpha: float) -> dict:
  pairs = {True: [], False: []}  # held out? -> (left neighbour as seen, target)
  for row, held in zip(rows, heldout):
    keep = row["masked_lm_weights"] > 0
    positions = row["masked_lm_positions"][keep]
    pairs[bool(held)] += zip(row["input_ids"][positions - 1].tolist(),
                             row["masked_lm_ids"][keep].tolist())
  train, test = np.array(pairs[False]), np.array(pairs[True])
  vocab_size = 1 + int(max(train.max(), test.max()))
  unigram = np.bincount(train[:, 1], minlength=vocab_size) + 0.5
  unigram /= unigram.sum()
  # Bigram counts as a sparse (left, target) matrix;
  # p = (count + alpha * unigram) / (n_left + alpha).
  counts = sparse.csr_matrix((np.ones(len(train)), (train[:, 0], train[:, 1])),
                             shape=(vocab_size, vocab_size))
  left_totals = np.asarray(counts.sum(1)).ravel()
  pair_counts = np.asarray(counts[test[:, 0], test[:, 1]]).ravel()
  bigram = (pair_counts + alpha * unigram[test[:, 1]]) / (left_totals[test[:, 0]] + alpha)
  best = np.asarray(counts.argmax(1)).ravel()
  best = np.where(left_totals > 0, best, int(np.argmax(unigram)))
  return {"mlm_predictions": int(len(test)),
          "mlm_unigram_loss": float(-np.log(unigram[test[:, 1]]).mean()),
          "mlm_unigram_accuracy": float((test[:, 1] == np.argmax(unigram)).mean()),
          "mlm_left_bigram_loss": float(-np.log(bigram).mean()),
          "mlm_left_bigram_accuracy": float((best[test[:, 0]] == test[:, 1]).mean()),
          "mlm_left_bigram_alpha": alpha}


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--input_files", required=True,
                      help="pretraining TFRecords: comma-separated paths or globs")
  parser.add_argument("--every", type=int, default=20, help="hold out every k-th record (5%%)")
  parser.add_argument("--alpha", type=float, default=20.0, help="bigram smoothing")
  args = parser.parse_args()
  files = sorted(f for pattern in split_patterns(args.input_files) for f in glob.glob(pattern))
  if not files:
    raise SystemExit(f"error: no files match {args.input_files!r}")
  rows = read_all(files)
  heldout = np.arange(len(rows)) % args.every == args.every - 1
  print(json.dumps({**mlm_baselines(rows, heldout, args.alpha),
                    **nsp_baselines(rows, heldout)}, indent=1))


if __name__ == "__main__":
  main()
