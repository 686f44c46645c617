"""The names a run reports its language-model metrics under: "ltr" (next-token prediction, no
masking) as lm_loss / lm_accuracy / lm_unigram_accuracy, the masked-LM objectives as mlm_*, in the
console log, TensorBoard, history.jsonl and eval_metrics.json alike."""

import json
import os

import pytest
import tensorflow as tf

from bert_keras.training.pretraining_task import PretrainingTask
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import run, tiny_flags

LM_NAMES = {"mlm_nsp": ("mlm_loss", "mlm_accuracy", "mlm_unigram_accuracy"),
            "mlm": ("mlm_loss", "mlm_accuracy", "mlm_unigram_accuracy"),
            "ltr": ("lm_loss", "lm_accuracy", "lm_unigram_accuracy")}


def _other_prefix(objective: str) -> str:
  """The prefix no metric of `objective` may carry: mlm_ for ltr, lm_ for the masked-LM ones."""
  return "mlm_" if objective == "ltr" else "lm_"


def _sums(objective: str) -> dict:
  sums = {"mlm_loss_sum": tf.constant(6.0), "mlm_weight": tf.constant(3.0),
          "mlm_correct": tf.constant(1.0), "mlm_unigram_correct": tf.constant(2.0)}
  if objective == "mlm_nsp":
    sums.update(nsp_loss_sum=tf.constant(1.0), nsp_count=tf.constant(2.0),
                nsp_correct=tf.constant(1.0), nsp_random_next=tf.constant(1.0))
  return sums


@pytest.mark.parametrize("objective", ["mlm_nsp", "mlm", "ltr"])
def test_task_metrics_are_named_for_the_objective(objective):
  metrics = {k: float(v) for k, v in PretrainingTask(objective).metrics(_sums(objective)).items()}
  loss, accuracy, unigram = LM_NAMES[objective]
  assert (metrics[loss], metrics[accuracy], metrics[unigram]) == (2.0, pytest.approx(1 / 3),
                                                                  pytest.approx(2 / 3))
  assert not [k for k in metrics if k.startswith(_other_prefix(objective))], metrics
  assert ("nsp_accuracy" in metrics) == (objective == "mlm_nsp")


def _tags(model_dir: str) -> set:
  """Every scalar tag of the run's TensorBoard event files."""
  log_dir = os.path.join(model_dir, "tensorboard")
  return {v.tag for name in tf.io.gfile.listdir(log_dir)
          for e in tf.compat.v1.train.summary_iterator(os.path.join(log_dir, name))
          for v in e.summary.value}


@pytest.mark.parametrize("objective", ["ltr", "mlm_nsp"])
def test_a_run_reports_its_lm_metrics_under_the_objectives_names(tmp_path, objective):
  """A tiny run of scripts/run_pretraining.py with a held-out evaluation at steps 2 and 3: every
  output a user reads names the LM metrics after the objective, and none under the other names."""
  train = write_records(str(tmp_path / "train"), num_files=1, per_file=32, seed=1)
  heldout = write_records(str(tmp_path / "heldout"), num_files=1, per_file=16, seed=2)
  model_dir = str(tmp_path / "run")
  done = run(tiny_flags(train, model_dir, steps=3, num_layers=1, objective=objective,
                        eval_input_files=heldout, eval_every=2, eval_steps=2, checkpoint_every=3))
  loss, accuracy, unigram = LM_NAMES[objective]
  other = _other_prefix(objective)

  rows = [json.loads(line)
          for line in open(os.path.join(model_dir, "history.jsonl"), encoding="utf-8")]
  assert {r["split"] for r in rows} == {"train", "eval"}
  for row in rows:
    assert {loss, accuracy} <= set(row), row
    assert not [k for k in row if k.startswith(other)], row
  assert all(unigram in r for r in rows if r["split"] == "eval")

  metrics = json.load(open(os.path.join(model_dir, "eval_metrics.json"), encoding="utf-8"))
  assert [r["step"] for r in metrics["eval"]] == [2, 3]
  for row in metrics["eval"]:
    assert {loss, accuracy, unigram} <= set(row), row
    assert 0.0 <= row[accuracy] <= 1.0 and 0.0 <= row[unigram] <= 1.0
    assert not [k for k in row if k.startswith(other)], row

  tags = _tags(model_dir)
  assert {f"train/{loss}", f"train/{accuracy}", f"eval/{loss}", f"eval/{accuracy}",
          f"eval/{unigram}"} <= tags, tags
  assert not [t for t in tags if t.split("/", 1)[-1].startswith(other)], tags

  # The console log: the train and eval lines name the metrics the same way.
  log = done.stderr
  assert f" {accuracy}=" in log and f" {loss}=" in log, log[-3000:]
  assert f" {other}" not in log, log[-3000:]
