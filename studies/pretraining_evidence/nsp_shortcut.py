"""The padding shortcut of next-sentence prediction (issue 4): in the records and in a model.

`create_instances_from_document` (as google-research/bert) draws a short target length for 10% of
the document passes; such a pass cuts the document into many short, often one-sentence chunks, and
a one-sentence chunk always gets a random next segment. So examples shorter than max_seq_length
(padded) are mostly "random next", and a model can score above the NSP majority without comparing
A with B at all: "padded -> random next, full -> is next". Only the full-length examples measure
the topic signal NSP is meant to teach.

  # the records: label balance of padded and full-length examples, accuracy of the padding rule
  python studies/pretraining_evidence/nsp_shortcut.py --records 'out/examples/pretraining-*' \
      --records heldout.tfrecord --take 576
  # a finished run_pretraining model_dir (its latest checkpoint): held-out NSP accuracy split
  # into full-length and padded examples, beside the majority of each part
  python studies/pretraining_evidence/nsp_shortcut.py --run runs/w5_s1

Prints one JSON object per --records / --run.
"""

from __future__ import annotations

import argparse
import glob
import json
import os

import numpy as np
import tensorflow as tf

from components.pretrainer.executor import nsp_padding_rule, read_nsp_padding


def _records(pattern: str, take: int):
  files = sorted(glob.glob(pattern))
  if not files:
    raise SystemExit(f"error: no files match {pattern!r}")
  dataset = tf.data.TFRecordDataset(files)
  return dataset.take(take) if take > 0 else dataset


def _part(labels: np.ndarray, correct: np.ndarray | None = None) -> dict:
  """Label balance of `labels` (0/1) and its majority, with the accuracy of `correct` if given."""
  if not len(labels):
    return {"examples": 0}
  part = {"examples": int(len(labels)), "random_next": float(labels.mean()),
          "majority": float(max(labels.mean(), 1.0 - labels.mean()))}
  if correct is not None:
    part["accuracy"] = float(correct.mean())
  return part


def record_stats(pattern: str, take: int) -> dict:
  """Label balance of padded vs full-length examples and the padding rule's accuracy.

  The rule is the pretrainer's (`nsp_padding_rule`, logged as eval_nsp_padding_rule_accuracy); on
  the padded part it scores their random-next fraction, on the full-length part their is-next one.
  """
  files = sorted(glob.glob(pattern))
  if not files:
    raise SystemExit(f"error: no files match {pattern!r}")
  records = read_nsp_padding(files, take)
  if records is None:
    raise SystemExit(f"error: no NSP labels in {pattern!r}")
  labels, padded = records
  return {"records": pattern, "examples": int(len(labels)),
          "padding_rule": dict(nsp_padding_rule(labels, padded), **_part(labels)),
          "padded": _part(labels[padded]), "full_length": _part(labels[~padded])}


def run_stats(run_dir: str, take: int) -> dict:
  """NSP accuracy of the run's latest checkpoint on its eval_input_files, full vs padded."""
  # pylint: disable=import-outside-toplevel
  from bert_keras.data.pretraining_records import feature_spec
  from bert_keras.training.pretrain import build_pretrainer
  from bert_keras.training.trainer import model_variables
  from bert_keras.configs.training import TrainingConfig

  config = TrainingConfig.from_file(os.path.join(run_dir, "training_config.json"))
  latest = tf.train.latest_checkpoint(run_dir)
  if not latest:
    raise SystemExit(f"error: no checkpoint in {run_dir}")
  spec = feature_spec(config.data.max_seq_length, config.data.max_predictions_per_seq)
  dataset = _records(config.data.eval_input_files, take).map(
      lambda raw: tf.io.parse_single_example(raw, spec)).batch(64)
  model = build_pretrainer(config)

  def inputs(f):
    return {"input_word_ids": tf.cast(f["input_ids"], tf.int32),
            "input_mask": tf.cast(f["input_mask"], tf.int32),
            "input_type_ids": tf.cast(f["segment_ids"], tf.int32),
            "masked_lm_positions": tf.cast(f["masked_lm_positions"], tf.int32)}

  model(inputs(next(iter(dataset))))  # build the variables before restoring
  tf.train.Checkpoint(model=model_variables(model)).restore(latest).expect_partial()
  labels, predictions, lengths = [], [], []
  for batch in dataset:
    logits = model(inputs(batch), training=False)["nsp_logits"]  # (batch, 2)
    predictions.append(np.argmax(logits.numpy(), -1))
    labels.append(batch["next_sentence_labels"].numpy()[:, 0])
    lengths.append(batch["input_mask"].numpy().sum(-1))
  labels, predictions, lengths = map(np.concatenate, (labels, predictions, lengths))
  correct, padded = predictions == labels, lengths < config.data.max_seq_length
  return {"run": run_dir, "checkpoint": os.path.basename(latest), "all": _part(labels, correct),
          "full_length": _part(labels[~padded], correct[~padded]),
          "padded": _part(labels[padded], correct[padded]),
          "predicted_random_next": float(predictions.mean())}


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--records", action="append", default=[], help="TFRecords (glob)")
  parser.add_argument("--run", action="append", default=[], help="a run_pretraining model_dir")
  parser.add_argument("--take", type=int, default=0,
                      help="only the first N records (576 = the pipeline's 18 eval batches of 32)")
  args = parser.parse_args()
  for pattern in args.records:
    print(json.dumps(record_stats(pattern, args.take)))
  for run_dir in args.run:
    print(json.dumps(run_stats(run_dir, args.take)))


if __name__ == "__main__":
  main()
