"""Held-out evaluation of run_pretraining: the unigram baseline and eval_metrics.json, checked
against numpy computations over the same records."""

import json
import os

import numpy as np
import tensorflow as tf

from bert_keras.training.pretrain import run_pretraining
from bert_keras.training.pretraining_input import label_frequencies, unmask
from bert_keras.configs.training import TrainingConfig
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL


def _records(pattern):
  """Every record of the files as numpy features."""
  out = []
  for path in sorted(tf.io.gfile.glob(pattern)):
    for raw in tf.data.TFRecordDataset(path):
      f = tf.train.Example.FromString(raw.numpy()).features.feature
      out.append({k: np.array(v.int64_list.value or v.float_list.value) for k, v in f.items()})
  return out


def test_label_frequencies_count_masked_and_next_token_targets(tmp_path):
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=8)
  records = _records(pattern)
  masked = np.zeros(200)
  following = np.zeros(200)
  for r in records:
    np.add.at(masked, r["masked_lm_ids"], r["masked_lm_weights"])
    ids = unmask({k: tf.constant(v) for k, v in r.items()}).numpy()
    np.add.at(following, ids[1:], r["input_mask"][1:])
  for objective, expected in (("mlm_nsp", masked), ("ltr", following)):
    got = label_frequencies(pattern, seq_length=32, max_predictions=5, objective=objective)
    np.testing.assert_allclose(np.pad(got, [0, 200 - got.size]), expected)
  # max_records limits the scan.
  few = label_frequencies(pattern, seq_length=32, max_predictions=5, max_records=3)
  assert few.sum() == sum(r["masked_lm_weights"].sum() for r in records[:3])


def test_eval_metrics_hold_the_curve_and_the_unigram_baseline(tmp_path):
  train = write_records(str(tmp_path / "train"), num_files=2, per_file=32, seed=1)
  heldout = write_records(str(tmp_path / "heldout"), num_files=1, per_file=16, seed=2)
  model_dir = str(tmp_path / "run")
  config = TrainingConfig.from_flat(
      input_files=train, eval_input_files=heldout, model="bert_tiny",
      model_overrides=dict(TINY_MODEL), max_seq_length=32, max_predictions_per_seq=5,
      train_batch_size=8, num_train_steps=4, num_warmup_steps=1, learning_rate=1e-3,
      checkpoint_every=4, log_every=2, eval_every=2, eval_steps=2, output_dir=model_dir,
      vocab_size=128)
  result = run_pretraining(config)

  counts = np.zeros(200)
  for r in _records(train):
    np.add.at(counts, r["masked_lm_ids"], r["masked_lm_weights"])
  top = int(counts.argmax())
  # eval_steps x batch = the 16 held-out records, each once: the baseline is exact.
  held = _records(heldout)
  expected = (sum(((r["masked_lm_ids"] == top) * r["masked_lm_weights"]).sum() for r in held)
              / sum(r["masked_lm_weights"].sum() for r in held))
  random_next = np.mean([r["next_sentence_labels"][0] for r in held])

  metrics = json.load(open(os.path.join(model_dir, "eval_metrics.json")))
  assert metrics["unigram_baseline"]["token_id"] == top
  assert abs(metrics["unigram_baseline"]["train_frequency"] - counts[top] / counts.sum()) < 1e-9
  assert [row["step"] for row in metrics["eval"]] == [2, 4]
  for row in metrics["eval"]:
    assert abs(row["mlm_unigram_accuracy"] - expected) < 1e-6
    assert abs(row["nsp_majority_accuracy"] - max(random_next, 1 - random_next)) < 1e-6
    assert 0.0 <= row["nsp_accuracy"] <= 1.0 and row["elapsed_sec"] > 0
  assert metrics["final"] == metrics["eval"][-1]
  assert result["eval"]["mlm_accuracy"] == metrics["final"]["mlm_accuracy"]
  # The same numbers went to TensorBoard.
  events = [e for f in tf.io.gfile.glob(os.path.join(model_dir, "tensorboard", "*"))
            for e in tf.compat.v1.train.summary_iterator(f)]
  tags = {v.tag for e in events for v in e.summary.value}
  assert {"eval/mlm_accuracy", "eval/mlm_unigram_accuracy", "eval/nsp_accuracy"} <= tags
