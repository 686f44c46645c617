"""End to end on real embedded data, GPT-1 as a model family of the BERT scripts' library calls:
BPE -> run_pretraining's GPT run (the Trainer) -> run_finetuning on gpt/polarity -> the exporter's
text-in SavedModel, with the progress line and TensorBoard events along the way."""

import json
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import keras_classes
from bert_keras.configs.export import ExportConfig
from bert_keras.configs.finetuning import RunConfig
from bert_keras.configs.tasks import get_task_config
from bert_keras.configs.training import TrainingConfig
from bert_keras.errors import UserError
from bert_keras.export.export_config import run_export
from bert_keras.gpt import lm_data
from bert_keras.gpt.gpt_finetuning import GPTFamily
from bert_keras.gpt.gpt_pretraining import run_gpt_pretraining
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.tasks.classification_task import ClassificationExample
from bert_keras.tasks.finetuning import run_finetuning
from bert_keras.tasks.registry import get_task
from tests.tensorboard_events import scalar_events


def _pretraining(bpe, output_dir, **more):
  return TrainingConfig.from_flat(
      model="gpt_nano", bpe_model=bpe, corpora="lee_background", output_dir=output_dir,
      num_train_steps=4, num_warmup_steps=1, train_batch_size=4, max_seq_length=16,
      max_predictions_per_seq=2, learning_rate=1e-3, **more)


@pytest.mark.slow
def test_bpe_pretrain_finetune_export(tmp_path, monkeypatch, capsys):
  bpe = str(tmp_path / "bpe.model")
  tokenizer = lm_data.run_train_bpe(["lee_background"], [], 400, bpe)
  assert tokenizer.vocab_size == 400 and os.path.exists(bpe + ".json")
  pre_dir = str(tmp_path / "gpt")
  metrics = run_gpt_pretraining(_pretraining(bpe, pre_dir))["train"]
  assert np.isfinite(metrics["lm_loss"]) and metrics["step"] == 4
  for name in ("training_config.json", "decoder.keras", "bpe.model", "history.jsonl",
               "metrics.json"):
    assert os.path.exists(os.path.join(pre_dir, name)), name
  events = scalar_events(os.path.join(pre_dir, "tensorboard"))
  assert {"train/loss", "train/learning_rate", "train/lm_accuracy"} <= set(events)
  assert events["train/loss"] == {4: pytest.approx(metrics["loss"])}
  # A rerun resumes from the last checkpoint: nothing left to train, the same final row.
  assert run_gpt_pretraining(_pretraining(bpe, pre_dir))["train"]["loss"] == metrics["loss"]

  # Fine-tuning must start from the pretrained decoder.keras: record the decoder it is handed.
  loaded = {}
  load = GPTFamily.load

  def recording_load(self, *args):
    result = load(self, *args)
    loaded["start"] = [w.copy() for w in result.encoder.get_weights()]
    return result

  monkeypatch.setattr(GPTFamily, "load", recording_load)
  fine_dir = str(tmp_path / "polarity")
  task_config = get_task_config("gpt/polarity", num_epochs=0.2, train_batch_size=8,
                                max_seq_length=24)
  results = run_finetuning(task_config, RunConfig(init_checkpoint=pre_dir, output_dir=fine_dir))
  scores = results["dev"]
  pretrained = keras_classes.load_model(os.path.join(pre_dir, "decoder.keras")).get_weights()
  assert len(loaded["start"]) == len(pretrained)
  for start, saved in zip(loaded["start"], pretrained):
    np.testing.assert_array_equal(start, saved)
  assert 0.0 <= scores["accuracy"] <= 100.0
  with open(os.path.join(fine_dir, "metrics.json")) as f:
    assert json.load(f)["dev"] == scores
  # L3 = L2 + 0.5 * L1: the LM term (about ln 400 nats at the start) dominates the loss.
  assert results["final_train_loss"] > 2.0
  # Progress as BERT fine-tuning prints it: 160 examples * 0.2 epochs / 8 = 4 steps, then the 40
  # dev examples.
  err = capsys.readouterr().err
  assert re.search(r"train step 4/4 \[=+\] 100% .*loss=\S+ lr=", err), err
  assert "evaluate dev step" in err, err
  events = scalar_events(os.path.join(fine_dir, "tensorboard"))
  assert {"train/loss", "train/learning_rate", "dev/accuracy", "dev/f1"} <= set(events)
  # Both parts of L3 = L2 + 0.5 * L1 (3.2), the epoch's means, as curves of their own.
  for step, loss in events["train/loss"].items():
    parts = events["train/task_loss"][step] + 0.5 * events["train/lm_loss"][step]
    assert loss == pytest.approx(parts, rel=1e-4) and events["train/lm_loss"][step] > 2.0
  assert events["dev/accuracy"] == {4: pytest.approx(scores["accuracy"])}
  for name in ("model.keras", "bpe.model", "task_info.json", "config.json"):
    assert os.path.exists(os.path.join(fine_dir, name)), name

  # The exporter finds GPT-1's export through the task registry; it serves the fine-tuned model.
  export_dir = str(tmp_path / "export")
  assert run_export(ExportConfig(output_dir=export_dir, finetuned_dir=fine_dir))["task"] == \
      "gpt/polarity"
  texts = ["a moving film", "dull"]
  served = tf.saved_model.load(export_dir)
  logits = served.signatures["serving_default"](text=tf.constant(texts))["logits"].numpy()
  assert logits.shape == (2, 2)
  task = get_task(task_config)
  examples = [ClassificationExample(guid=str(i), text_a=t) for i, t in enumerate(texts)]
  features = task.make_features(examples, GPTTokenizer(model_path=bpe), training=False)
  model = keras_classes.load_model(os.path.join(fine_dir, "model.keras"))
  expected = model(features.inputs, training=False)["logits"].numpy()
  np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)


def test_run_errors(tmp_path):
  with pytest.raises(UserError, match="no such input file"):
    lm_data.run_train_bpe([], [str(tmp_path / "missing.txt")], 100, str(tmp_path / "x.model"))
  with pytest.raises(UserError, match="--bpe_model is required"):
    run_gpt_pretraining(TrainingConfig.from_flat(model="gpt_nano",
                                                 output_dir=str(tmp_path / "gpt")))
  with pytest.raises(UserError, match="needs --model .* and --vocab_file"):
    run_finetuning(get_task_config("gpt/polarity"), RunConfig(output_dir=str(tmp_path / "out")))
  with pytest.raises(UserError, match="decoder.keras: no such file"):
    run_finetuning(get_task_config("gpt/polarity"),
                   RunConfig(init_checkpoint=str(tmp_path), output_dir=str(tmp_path / "out")))
  assert not os.path.exists(tmp_path / "out")


def test_bert_pretraining_refuses_gpt_settings(tmp_path):
  from bert_keras.training.pretrain import run_pretraining  # pylint: disable=import-outside-toplevel
  for flat in ({"model": "gpt_nano"}, {"corpora": "lee_background"}):
    with pytest.raises(UserError, match="GPT-1 .* pretrains on text"):
      run_pretraining(TrainingConfig.from_flat(input_files="x.tfrecord", max_seq_length=64,
                                               output_dir=str(tmp_path / "out"), **flat))
