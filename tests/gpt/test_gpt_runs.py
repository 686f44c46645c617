"""End to end on real embedded data: BPE -> GPT pretraining -> fine-tuning -> text-in SavedModel,
and the ablation study at its smoke budget."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import keras_classes
from bert_keras.errors import UserError
from bert_keras.gpt import gpt_runs, gpt_training
from bert_keras.gpt.ablation_study import merge_runs, run_study, span_token_f1
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.tasks.classification_task import ClassificationExample
from bert_keras.tasks.registry import get_task
from configs.ablations import get_study_config
from configs.gpt import GPTFinetuningConfig, GPTPretrainingConfig
from configs.tasks import TaskConfig


@pytest.mark.slow
def test_bpe_pretrain_finetune_export(tmp_path, monkeypatch):
  bpe = str(tmp_path / "bpe.model")
  tokenizer = gpt_runs.run_train_bpe(["lee_background"], [], 400, bpe)
  assert tokenizer.vocab_size == 400 and os.path.exists(bpe + ".json")
  pre_dir = str(tmp_path / "gpt")
  config = GPTPretrainingConfig(num_train_steps=4, num_warmup_steps=1, train_batch_size=4, max_seq_length=16,
                                learning_rate=1e-3)
  metrics = gpt_runs.run_gpt_pretraining("gpt_nano", bpe, ["lee_background"], [], config, pre_dir)
  assert np.isfinite(metrics["lm_loss"])
  for name in ("config.json", "decoder.keras", "bpe.model", "history.jsonl"):
    assert os.path.exists(os.path.join(pre_dir, name)), name

  # Fine-tuning must start from the pretrained decoder.keras: record the task model it is handed.
  finetuned = {}
  finetune = gpt_training.finetune

  def recording_finetune(model, *args, **kwargs):
    finetuned.update(model=model, start=[w.copy() for w in model.decoder.get_weights()])
    return finetune(model, *args, **kwargs)

  monkeypatch.setattr(gpt_training, "finetune", recording_finetune)
  fine_dir = str(tmp_path / "polarity")
  scores = gpt_runs.run_gpt_finetuning(
      "polarity", pre_dir, GPTFinetuningConfig(num_epochs=0.2, train_batch_size=32, max_seq_length=24),
      fine_dir)
  pretrained = keras_classes.load_model(os.path.join(pre_dir, "decoder.keras")).get_weights()
  assert len(finetuned["start"]) == len(pretrained)
  for start, saved in zip(finetuned["start"], pretrained):
    np.testing.assert_array_equal(start, saved)
  assert 0.0 <= scores["accuracy"] <= 1.0
  with open(os.path.join(fine_dir, "metrics.json")) as f:
    assert json.load(f) == scores

  # The text-in export serves the fine-tuned model itself: decoder and classifier.
  texts = ["a moving film", "dull"]
  served = tf.saved_model.load(os.path.join(fine_dir, "export"))
  logits = served.signatures["serving_default"](text=tf.constant(texts))["logits"].numpy()
  assert logits.shape == (2, 2)
  task = get_task(TaskConfig(task="gpt/polarity", max_seq_length=24))
  examples = [ClassificationExample(guid=str(i), text_a=t) for i, t in enumerate(texts)]
  features = task.make_features(examples, GPTTokenizer(model_path=bpe), training=False)
  expected = gpt_training.predict(finetuned["model"], features.inputs)
  np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)


def test_span_token_f1():
  # exact, one-of-two overlapping, disjoint, predicted span too long (1 of 4 tokens right)
  f1 = span_token_f1([5, 6, 9, 4], [6, 7, 9, 7], [5, 5, 5, 4], [6, 6, 6, 4])
  assert f1 == pytest.approx((1.0 + 0.5 + 0.0 + 0.4) / 4)


def test_run_errors(tmp_path):
  with pytest.raises(UserError, match="no such input file"):
    gpt_runs.run_train_bpe([], [str(tmp_path / "missing.txt")], 100, str(tmp_path / "x.model"))
  with pytest.raises(UserError, match="--bpe_model is required"):
    gpt_runs.run_gpt_finetuning("polarity", None, GPTFinetuningConfig(), str(tmp_path / "out"))


@pytest.mark.slow
def test_ablation_study_smoke(tmp_path):
  study = get_study_config("smoke", tasks={"polarity": ("gpt1", "bert_ltr_no_nsp"),
                                           "lee_probe": ("gpt1", "bert_no_pretraining"),
                                           "polarity_probe": ("bert_ltr_no_nsp",)},
                           zero_shot_points=1)
  rows = run_study(study, str(tmp_path / "s0"), log=lambda _: None)
  variants = {(r["experiment"], r["variant"]) for r in rows}
  assert {("ablation", "gpt1"), ("ablation", "bert_ltr_no_nsp"), ("zero_shot", "gpt1"),
          ("layer_transfer", "gpt1_k0"), ("layer_transfer", "gpt1_k1")} <= variants
  probes = {(r["task"], r["variant"], r["metric"]) for r in rows}
  assert {("lee_probe", "gpt1", "spearman"), ("lee_probe", "bert_no_pretraining", "pearson"),
          ("polarity_probe", "bert_ltr_no_nsp", "accuracy")} <= probes
  assert all(-1.0 <= r["value"] <= 1.0 for r in rows if r["task"] == "lee_probe")
  assert all(0.0 <= r["value"] <= 1.0 for r in rows if r["task"] != "lee_probe")
  merged = merge_runs([str(tmp_path / "s0")], study, str(tmp_path / "merged"))
  assert len(merged) == len(rows)
  table = (tmp_path / "merged" / "table.md").read_text()
  assert "| gpt1 |" in table and "Zero-shot" in table and "lee_probe (spearman)" in table
  assert (tmp_path / "merged" / "ablation.png").stat().st_size > 1000


def test_merge_runs_of_two_presets_keeps_every_variant(tmp_path):
  # `signal` and `signal_extra` run as separate processes measure different variants; merging
  # them under either preset must put every measured variant in the table (not only the preset's).
  runs = {"core": [("bert_ltr_no_nsp", "span", "token_f1", 0.07), ("gpt1", "lee_probe",
                                                                     "spearman", 0.06)],
          "extra": [("bert_ltr_no_nsp_bilstm", "span", "token_f1", 0.09),
                    ("gpt1_size_double", "lee_probe", "spearman", 0.05)]}
  for name, measured in runs.items():
    (tmp_path / name).mkdir()
    (tmp_path / name / "results.jsonl").write_text("".join(
        json.dumps({"experiment": "ablation", "variant": v, "task": t, "metric": m, "seed": s,
                    "value": x + s / 100}) + "\n" for v, t, m, x in measured for s in (0, 1)))
  study = get_study_config("signal")
  merged = merge_runs([str(tmp_path / "core"), str(tmp_path / "extra")], study,
                      str(tmp_path / "merged"))
  assert len(merged) == 8
  table = (tmp_path / "merged" / "table.md").read_text()
  assert "| bert_ltr_no_nsp_bilstm |  |  | 0.095 ± 0.007 |  |" in table
  assert "| gpt1_size_double | 0.055 ± 0.007 |" in table
  assert "| gpt1 | 0.065 ± 0.007 |" in table
  config = json.loads((tmp_path / "merged" / "study_config.json").read_text())
  assert config["tasks"]["span"][-1] == "bert_ltr_no_nsp_bilstm"
  assert "gpt1_size_double" in config["variants"]
