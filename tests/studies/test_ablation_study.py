"""Study model builders (ELMo-style LTR + RTL checkpoints and restores), the weights each variant
starts from (fine-tuned and frozen-feature), and merging re-runs."""

import json
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.training.trainer import model_variables
from studies.bert_gpt_ablation.study_config import get_ablation, get_study_config
from studies.bert_gpt_ablation import ablation_study, study_data
from studies.bert_gpt_ablation.ablation_study import (build_backbone, build_bert_task_model,
                                                      build_elmo_encoders, merge_runs,
                                                      pretrain_key)
from tests.models import harness

VOCAB = 60
SEED = 3


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


# === The weights each variant starts from ===

def _fresh(study, variant):
  """The variant's backbone as the study initialises it under SEED (no pretraining)."""
  keras.utils.set_random_seed(SEED)
  return build_backbone(study, VOCAB, variant)


def _pretrained(study, variant):
  """Stand-in pretrained weights for every checkpoint the variant reads: each array moved away from
  any initial value (zeros, ones or a seeded draw), so "started from them" is checked exactly."""
  rng = np.random.default_rng(11)
  out = {}
  for reverse in ((False, True) if variant.family == "elmo" else (False,)):
    out[pretrain_key(variant, reverse)] = [
        w + 0.5 + rng.normal(size=w.shape).astype(w.dtype)
        for w in build_backbone(study, VOCAB, variant).get_weights()]
  return out


def _study_data():
  """Random rows in both layouts: 6 train, 4 dev (classification; GPT reads `<start> x <extract>`
  like rows, BERT `[CLS] x [SEP]` like rows with segment ids)."""
  study = get_study_config("smoke")
  def split(n, seed):
    bert = harness.random_inputs(batch=n, seq=study.max_seq_length, vocab_size=VOCAB, num_padding=5,
                                 seed=seed)
    gpt = {k: bert[k] for k in ("input_word_ids", "input_mask")}
    return {"bert": bert, "gpt": gpt, "labels": np.arange(n, dtype=np.int32) % 2}
  return study, {"train": split(6, 1), "dev": split(4, 2), "regression": False}


def _assert_weights_equal(actual, expected):
  assert len(actual) == len(expected)
  for a, b in zip(actual, expected):
    np.testing.assert_array_equal(a, b)


def _backbones(model):
  """The task model's backbones by name: GPTTaskModel's decoder, or the BertEncoder(s) of
  build_bert_task_model (ELMo-style: ltr_encoder and rtl_encoder)."""
  if hasattr(model, "decoder"):
    return {"decoder": model.decoder}
  return {layer.name: layer for layer in model.layers if isinstance(layer, BertEncoder)}


@pytest.mark.parametrize("name", ["gpt1", "gpt1_no_pretraining", "bert_base",
                                  "bert_no_pretraining", "elmo_ltr_rtl"])
def test_finetune_variant_starts_from_the_pretrained_or_fresh_backbone(name, monkeypatch):
  study, data = _study_data()
  variant = get_ablation(name)
  pretrained = _pretrained(study, variant)
  fresh = _fresh(study, variant).get_weights()
  started = []

  def no_training(model, task, features, **kwargs):
    started.append({name: [w.copy() for w in b.get_weights()]
                    for name, b in _backbones(model).items()})
    return []

  monkeypatch.setattr(ablation_study, "fit_in_process", no_training)
  scores = ablation_study.finetune_variant(study, types.SimpleNamespace(
      tokenizer=types.SimpleNamespace(vocab_size=VOCAB)), "polarity", data, variant, pretrained,
      SEED, "unused")
  assert set(scores) == {"accuracy"}
  (backbones,) = started
  if variant.family == "elmo":  # LTR and RTL halves, each from its own pretrained model
    expected = {"ltr_encoder": pretrained[pretrain_key(variant, False)],
                "rtl_encoder": pretrained[pretrain_key(variant, True)]}
  else:
    name = "decoder" if variant.family == "gpt" else next(iter(backbones))
    expected = {name: pretrained[pretrain_key(variant)] if variant.pretrained else fresh}
  assert set(backbones) == set(expected)
  for name, weights in expected.items():
    _assert_weights_equal(backbones[name], weights)


def test_finetune_variant_transfers_only_the_first_k_layers(monkeypatch):
  study, data = _study_data()
  variant = get_ablation("gpt1")
  pretrained = _pretrained(study, variant)
  donor = build_backbone(study, VOCAB, variant)
  donor.set_weights(pretrained[pretrain_key(variant)])
  fresh = _fresh(study, variant)
  started = []

  def no_training(model, task, features, **kwargs):
    started.append(model.decoder)
    return []

  monkeypatch.setattr(ablation_study, "fit_in_process", no_training)
  ablation_study.finetune_variant(study, types.SimpleNamespace(
      tokenizer=types.SimpleNamespace(vocab_size=VOCAB)), "polarity", data, variant, pretrained,
      SEED, "unused", transfer_k=0)
  (decoder,) = started  # not trained: its weights are the ones fine-tuning would start from
  for layer in ("token_embedding", "position_embedding"):
    _assert_weights_equal(decoder.get_layer(layer).get_weights(),
                          donor.get_layer(layer).get_weights())
  _assert_weights_equal(decoder.blocks[0].get_weights(), fresh.blocks[0].get_weights())


def _features(model, rows):
  """Masked sum over tokens of every layer's states, concatenated: what the probes read."""
  layers = model(rows, training=False)["encoder_outputs"]
  states = np.concatenate([keras.ops.convert_to_numpy(x) for x in layers], axis=-1)
  return (states * rows["input_mask"][..., None]).sum(1)


@pytest.mark.parametrize("name", ["gpt1", "gpt1_no_pretraining", "bert_ltr_no_nsp",
                                  "bert_no_pretraining", "elmo_ltr_rtl"])
def test_frozen_features_read_the_pretrained_or_fresh_backbone(name):
  study, data = _study_data()
  variant = get_ablation(name)
  pretrained = _pretrained(study, variant)
  inputs = data["dev"]
  rows = inputs["gpt" if variant.family == "gpt" else "bert"]
  sums, counts = ablation_study.frozen_features(
      study, types.SimpleNamespace(tokenizer=types.SimpleNamespace(vocab_size=VOCAB)), variant,
      pretrained, SEED, inputs, batch_size=3)
  np.testing.assert_array_equal(counts, rows["input_mask"].sum(1))

  def with_weights(weights):
    model = build_backbone(study, VOCAB, variant)
    model.set_weights(weights)
    return model

  if variant.family == "elmo":  # the RTL model reads each row's real tokens reversed
    reversed_rows = {k: study_data.reverse_real_tokens(v, rows["input_mask"])
                     for k, v in rows.items()}
    expected = np.concatenate(
        [_features(with_weights(pretrained[pretrain_key(variant, False)]), rows),
         _features(with_weights(pretrained[pretrain_key(variant, True)]), reversed_rows)], -1)
  elif variant.pretrained:
    expected = _features(with_weights(pretrained[pretrain_key(variant)]), rows)
  else:
    expected = _features(_fresh(study, variant), rows)
    other = _features(with_weights(pretrained[pretrain_key(variant)]), rows)
    assert np.abs(other - expected).max() > 1e-3  # the two starting points are told apart
  np.testing.assert_allclose(sums, expected, rtol=1e-5, atol=1e-5)
