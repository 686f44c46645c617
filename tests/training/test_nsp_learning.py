"""Next-sentence prediction is learnable end to end, through the real code path.

Issue 4: held-out NSP accuracy of the demo stayed at its majority baseline. This test rules out a
bug anywhere on the path the demo uses: documents -> `create_instances_from_document` (which pairs
are "random next", segment ids) -> `serialize_instance` -> `pretraining_input.make_dataset` ->
`BertPretrainer` (pooler + NSP head) -> `losses` (label 1 = random next) -> the trainer and the
held-out evaluation. The documents are synthetic and easy on purpose: every document draws its
tokens from its own range of ids, so "B comes from another document" is visible from the tokens
alone. A wiring bug (labels not matching their pairs, segment ids lost, the NSP head cut off from
the loss or the metric reading the wrong axis) keeps held-out NSP accuracy at its majority
baseline; a working path lifts it well above in 600 small steps (about 10 s of training).
"""

from __future__ import annotations

import json
import os
import random

import pytest
import tensorflow as tf

from bert_keras.data import pretraining_instances as pinst
from bert_keras.data.pretraining_records import feature_spec
from bert_keras.training import losses
from bert_keras.training.pretrain import run_pretraining
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.configs.model import ConfigError
from bert_keras.configs.training import TrainingConfig

SEQ, PRED, VOCAB = 32, 5, 128
SPECIAL = pinst.SpecialIds(cls_id=101, sep_id=102, mask_id=103, vocab_size=VOCAB)
FIRST_ID, IDS_PER_DOC, NUM_DOCS = 8, 15, 6  # document d uses ids [8 + 15 d, 8 + 15 (d + 1))


def _documents(rng: random.Random):
  """NUM_DOCS documents of 12 sentences of 3-6 tokens, each document with its own id range."""
  docs = []
  for d in range(NUM_DOCS):
    lo = FIRST_ID + d * IDS_PER_DOC
    docs.append((f"doc{d}", [[rng.randrange(lo, lo + IDS_PER_DOC) for _ in range(rng.randint(3, 6))]
                             for _ in range(12)]))
  return docs


def _write(path: str, docs, seed: int, dupe_factor: int) -> list:
  """Instances of `docs` (fresh pairs and masks for every seed), as a TFRecord file."""
  rng = random.Random(seed)
  instances = []
  for _ in range(dupe_factor):
    for doc_id, sentences in docs:
      instances.extend(pinst.create_instances_from_document(
          sentences, lambda r, own=doc_id: pinst.pick_random_document(docs, own, r),
          max_seq_length=SEQ, short_seq_prob=0.1, masked_lm_prob=0.15,
          max_predictions_per_seq=PRED, special=SPECIAL, rng=rng))
  rng.shuffle(instances)
  with tf.io.TFRecordWriter(path) as writer:
    for instance in instances:
      writer.write(pinst.serialize_instance(instance, SEQ, PRED))
  return instances


@pytest.mark.slow
def test_heldout_nsp_accuracy_clears_the_majority_baseline(tmp_path):
  docs = _documents(random.Random(0))
  train = _write(str(tmp_path / "train.tfrecord"), docs, seed=1, dupe_factor=40)
  heldout = _write(str(tmp_path / "heldout.tfrecord"), docs, seed=2, dupe_factor=4)
  # The data itself: label 1 exactly when B's tokens come from another document's range.
  for instance in train[:50]:
    a_end = instance.segment_ids.index(1)
    doc_of = lambda ids: {(t - FIRST_ID) // IDS_PER_DOC for t in ids if FIRST_ID <= t < 98}
    a_docs = doc_of([t for p, t in enumerate(instance.input_ids[:a_end])
                     if p not in instance.masked_lm_positions])
    b_docs = doc_of([t for p, t in enumerate(instance.input_ids[a_end:], a_end)
                     if p not in instance.masked_lm_positions])
    if len(a_docs) == 1 and len(b_docs) == 1:
      assert instance.is_random_next == (a_docs != b_docs)

  # The records: next_sentence_labels is 1 for a random next, segment ids 0 up to the first [SEP].
  records = tf.data.TFRecordDataset(str(tmp_path / "train.tfrecord")).take(50)
  for instance, raw in zip(train, records):
    features = tf.io.parse_single_example(raw, feature_spec(SEQ, PRED))
    assert features["next_sentence_labels"].numpy().tolist() == [int(instance.is_random_next)]
    n = len(instance.segment_ids)
    assert features["segment_ids"].numpy()[:n].tolist() == instance.segment_ids
    assert instance.input_ids[instance.segment_ids.index(1) - 1] == SPECIAL.sep_id

  model_dir = str(tmp_path / "run")
  batches = len(heldout) // 16
  config = TrainingConfig.from_flat(
      input_files=str(tmp_path / "train.tfrecord"),
      eval_input_files=str(tmp_path / "heldout.tfrecord"), model="bert_tiny",
      model_overrides=dict(vocab_size=VOCAB, num_layers=2, hidden_size=32, num_heads=2,
                           intermediate_size=64, max_position_embeddings=SEQ),
      max_seq_length=SEQ, max_predictions_per_seq=PRED, train_batch_size=16,
      num_train_steps=600, num_warmup_steps=20, learning_rate=3e-3, checkpoint_every=600,
      log_every=600, eval_every=600, eval_steps=batches, eval_batch_size=16,
      steps_per_execution=50, shuffle_buffer_size=5000, vocab_size=VOCAB, deterministic=True,
      output_dir=model_dir)
  run_pretraining(config)

  final = json.load(open(os.path.join(model_dir, "eval_metrics.json")))["final"]
  majority = final["nsp_majority_accuracy"]
  assert final["nsp_accuracy"] > majority + 0.1, final
  assert final["nsp_loss"] < 0.64, final  # ln 2 = 0.693 is what a label-blind model gets


def test_nsp_loss_weight_scales_only_the_nsp_term():
  """TrainingConfig.nsp_loss_weight reaches the loss: mean MLM xent + weight * mean NSP xent."""
  sums = {"mlm_loss_sum": tf.constant(12.0), "mlm_weight": tf.constant(4.0),
          "nsp_loss_sum": tf.constant(2.0), "nsp_count": tf.constant(8.0)}
  assert float(losses.loss_from_sums(sums)) == pytest.approx(3.0 + 0.25)
  assert float(losses.loss_from_sums(sums, 4.0)) == pytest.approx(3.0 + 1.0)
  assert float(losses.loss_from_sums(sums, 0.0)) == pytest.approx(3.0)
  mlm_only = {k: v for k, v in sums.items() if not k.startswith("nsp")}
  assert float(losses.loss_from_sums(mlm_only, 4.0)) == pytest.approx(3.0)
  assert float(PretrainingTask("mlm_nsp", nsp_weight=4.0).loss(sums)) == pytest.approx(4.0)

  config = TrainingConfig.from_flat(model="bert_tiny", nsp_loss_weight=4.0)
  assert TrainingConfig.from_dict(json.loads(config.to_json())).model.nsp_loss_weight == 4.0
  assert TrainingConfig.from_flat(model="bert_tiny").model.nsp_loss_weight == 1.0  # the paper's sum
  with pytest.raises(ConfigError, match="nsp_loss_weight"):
    TrainingConfig.from_flat(model="bert_tiny", nsp_loss_weight=-1.0)
