"""Trainer train rows: the learning rate is the one the row's last update used, and the
throughput counts the train calls alone (not checkpoints, evaluations, nor the call that traced
the step)."""

import time

import pytest
import tensorflow as tf

from bert_keras.training.optimization import WarmupDecaySchedule
from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_input import make_dataset
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from bert_keras.configs.training import TrainingConfig
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL

PAUSE = 1.0  # seconds added to each checkpoint, evaluation and trace
STEPS, WARMUP, PEAK = 8, 4, 1e-3


class _SlowToTrace(PretrainingTask):
  """Tracing the step takes PAUSE seconds longer (Python code runs only while tracing)."""

  def counts(self, features):
    time.sleep(PAUSE)
    return super().counts(features)


def test_rows_carry_the_last_updates_rate_and_train_only_throughput(tmp_path, caplog):
  pattern = write_records(str(tmp_path / "data"), num_files=1, per_file=32)
  config = TrainingConfig.from_flat(input_files=pattern, model="bert_tiny",
                          model_overrides=dict(TINY_MODEL, num_layers=1), max_seq_length=32,
                          max_predictions_per_seq=5, train_batch_size=8, num_train_steps=STEPS,
                          num_warmup_steps=WARMUP, learning_rate=PEAK)
  strategy = tf.distribute.get_strategy()
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  run = config.override(output_dir=str(tmp_path / "run"), log_every=2, checkpoint_every=2, seed=0)
  trainer = Trainer(strategy, model, optimizer, _SlowToTrace(config.model.objective), run)
  save = trainer.save

  def slow_save():
    time.sleep(PAUSE)
    return save()

  trainer.save = slow_save
  data = lambda ctx, skip: make_dataset(run, pattern, input_context=ctx, skip_batches=skip)
  caplog.set_level("INFO")
  caplog.set_level("INFO", logger="absl")  # an earlier test in this process may have quieted it
  history = trainer.train(data, STEPS, eval_fn=lambda: time.sleep(PAUSE), eval_every=2)
  rows = [r for r in history if r["split"] == "train"]
  assert [r["step"] for r in rows] == [2, 4, 6, 8]
  schedule = WarmupDecaySchedule(PEAK, STEPS, WARMUP)
  for row in rows:
    # Update k (counted from 1) ran at schedule(k - 1): in the warmup, 2.5e-4 at step 2.
    assert row["learning_rate"] == pytest.approx(float(schedule(row["step"] - 1)), rel=1e-6), row
  # Each window holds two steps of a one-layer model (about 0.01 s each here) beside PAUSE
  # seconds of tracing (the first) or checkpointing and evaluating (the others): counted, they
  # would bring the rate below 2 / PAUSE steps per second; not counted, it is far above 3 / PAUSE.
  for row in rows:
    assert row["steps_per_sec"] > 3 / PAUSE, row
    assert row["sequences_per_sec"] == pytest.approx(8 * row["steps_per_sec"])
  # The logged line (the one progress line, bert_keras/training/progress.py) gives the rate and
  # the ETA of the steps left (well under a minute here).
  lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("train step ")]
  assert [line.split()[2] for line in lines] == ["2/8", "4/8", "6/8", "8/8"], lines
  assert all(" steps/s ETA 0:00:" in line for line in lines), lines
