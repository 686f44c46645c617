"""Study model builders (ELMo-style LTR + RTL checkpoints and restores) and merging re-runs."""

import json

import keras
import numpy as np
import tensorflow as tf

from bert_keras.gpt.ablation_study import build_bert_task_model, build_elmo_encoders, merge_runs
from bert_keras.training.trainer import model_variables
from configs.ablations import get_ablation, get_study_config
from tests.models import harness

VOCAB = 60


def _elmo_span_model(seed):
  keras.utils.set_random_seed(seed)
  study = get_study_config("smoke")
  encoders = build_elmo_encoders(study, VOCAB, get_ablation("elmo_ltr_rtl"))
  return encoders, build_bert_task_model(encoders, "span", 2)


def _inputs():
  return harness.random_inputs(batch=3, seq=12, vocab_size=VOCAB, seed=4)


def test_elmo_directions_have_distinct_variable_paths():
  encoders, model = _elmo_span_model(0)
  paths = [v.path for v in model.variables]
  assert len(paths) == len(set(paths))
  assert any(p.startswith("ltr_encoder/token_embedding") for p in paths)
  assert any(p.startswith("rtl_encoder/token_embedding") for p in paths)
  assert [e.name for e in encoders] == ["ltr_encoder", "rtl_encoder"]
  # Keyed by path exactly as the Trainer checkpoints a model.
  assert len(model_variables(model)) == len(model.variables)


def test_elmo_model_checkpoint_round_trip(tmp_path):
  _, model = _elmo_span_model(0)
  inputs = _inputs()
  expected = np.asarray(model(inputs, training=False)["logits"])
  path = tf.train.Checkpoint(model=model_variables(model)).save(str(tmp_path / "ckpt"))

  _, fresh = _elmo_span_model(1)
  before = np.asarray(fresh(inputs, training=False)["logits"])
  assert np.abs(before - expected).max() > 1e-4  # a different initialisation
  tf.train.Checkpoint(model=model_variables(fresh)).restore(path).assert_existing_objects_matched()
  np.testing.assert_array_equal(np.asarray(fresh(inputs, training=False)["logits"]), expected)


def test_elmo_weights_still_move_by_order():
  """Pretraining hands the study's encoders their weights with get/set_weights: the name scope
  must not change the weight order or shapes of a plain BertEncoder of the same size."""
  encoders, _ = _elmo_span_model(0)
  ltr, rtl = encoders
  assert [w.shape for w in ltr.get_weights()] == [w.shape for w in rtl.get_weights()]
  rtl.set_weights(ltr.get_weights())
  inputs = _inputs()
  np.testing.assert_allclose(np.asarray(rtl(inputs, training=False)["sequence_output"]),
                             np.asarray(ltr(inputs, training=False)["sequence_output"]), atol=1e-6)


def test_merge_takes_a_remeasured_variant_from_the_first_run_and_keeps_every_other_row(tmp_path):
  # After a fix one variant is re-run (--variants) and listed first in --merge: its rows replace
  # the old ones for the same seeds, every other row (other variants, other seeds) is kept.
  def write(name, rows):
    (tmp_path / name).mkdir()
    (tmp_path / name / "results.jsonl").write_text("".join(
        json.dumps({"experiment": "ablation", "variant": v, "task": "span", "metric": "token_f1",
                    "seed": s, "value": x}) + "\n" for v, s, x in rows))

  write("fixed", [("elmo_ltr_rtl", 0, 0.5), ("elmo_ltr_rtl", 1, 0.7)])
  write("old", [("elmo_ltr_rtl", 0, 0.1), ("elmo_ltr_rtl", 1, 0.1), ("bert_no_nsp", 0, 0.2),
                ("bert_no_nsp", 1, 0.8)])
  write("seed2", [("elmo_ltr_rtl", 2, 0.9), ("bert_no_nsp", 2, 0.6)])
  runs = [str(tmp_path / n) for n in ("fixed", "old", "seed2")]
  merged = merge_runs(runs, get_study_config("signal"), str(tmp_path / "merged"))
  values = {(r["variant"], r["seed"]): r["value"] for r in merged}
  assert values == {("elmo_ltr_rtl", 0): 0.5, ("elmo_ltr_rtl", 1): 0.7, ("elmo_ltr_rtl", 2): 0.9,
                    ("bert_no_nsp", 0): 0.2, ("bert_no_nsp", 1): 0.8, ("bert_no_nsp", 2): 0.6}
  table = (tmp_path / "merged" / "table.md").read_text()
  assert "Seeds: [0, 1, 2] (n=3)" in table
  assert "| elmo_ltr_rtl |  |  | 0.700 ± 0.200 |  |" in table
  assert "| bert_no_nsp |  |  | 0.533 ± 0.306 |  |" in table
  # Paired per seed: -0.3, +0.1, -0.3.
  assert ("| MLM beats ELMo-style LTR+RTL (BERT 5.1) | bert_no_nsp - elmo_ltr_rtl | span "
          "(token_f1) | -0.167 ± 0.231 | 1/3 |") in table
  assert "NSP helps" not in table  # bert_base was not measured
  assert "| span | token_f1 | elmo_ltr_rtl | 0.500, 0.700, 0.900 | 0.700 ± 0.200 |" in table
