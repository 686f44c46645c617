"""End to end on real embedded data: BPE -> GPT pretraining -> fine-tuning -> text-in SavedModel,
with the progress line and TensorBoard events along the way."""

import json
import os
import re

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import keras_classes
from bert_keras.errors import UserError
from bert_keras.gpt import gpt_runs, gpt_training
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.tasks.classification_task import ClassificationExample
from bert_keras.tasks.registry import get_task
from bert_keras.configs.gpt import GPTFinetuningConfig, GPTPretrainingConfig
from bert_keras.configs.tasks import TaskConfig
from tests.tensorboard_events import scalar_events


@pytest.mark.slow
def test_bpe_pretrain_finetune_export(tmp_path, monkeypatch, capsys):
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
  events = scalar_events(os.path.join(pre_dir, "tensorboard"))
  assert {"train/loss", "train/learning_rate", "train/lm_accuracy"} <= set(events)
  assert events["train/loss"] == {4: pytest.approx(metrics["loss"])}

  # Fine-tuning must start from the pretrained decoder.keras: record the task model it is handed.
  finetuned = {}
  finetune = gpt_training.finetune

  def recording_finetune(model, *args, **kwargs):
    finetuned.update(model=model, start=[w.copy() for w in model.decoder.get_weights()])
    return finetune(model, *args, **kwargs)

  monkeypatch.setattr(gpt_training, "finetune", recording_finetune)
  fine_dir = str(tmp_path / "polarity")
  scores = gpt_runs.run_gpt_finetuning(
      "polarity", pre_dir, GPTFinetuningConfig(num_epochs=0.2, train_batch_size=8, max_seq_length=24),
      fine_dir)
  pretrained = keras_classes.load_model(os.path.join(pre_dir, "decoder.keras")).get_weights()
  assert len(finetuned["start"]) == len(pretrained)
  for start, saved in zip(finetuned["start"], pretrained):
    np.testing.assert_array_equal(start, saved)
  assert 0.0 <= scores["accuracy"] <= 100.0
  with open(os.path.join(fine_dir, "metrics.json")) as f:
    assert json.load(f) == scores
  # Progress as BERT fine-tuning prints it: 160 examples * 0.2 epochs / 8 = 4 steps, timed from
  # the end of the first (which traces the step), then the 40 dev examples in one batch.
  err = capsys.readouterr().err
  assert re.search(r"train step 4/4 \[=+\] 100% [\d.]+ steps/s ETA 0:00:00 loss=\S+ lr=", err), err
  assert "evaluate dev step 1/1 [====================] 100%" in err, err
  # TensorBoard events: the train loss and learning rate, and the dev metrics at the last step.
  events = scalar_events(os.path.join(fine_dir, "tensorboard"))
  assert {"train/loss", "train/learning_rate", "dev/accuracy", "dev/f1"} <= set(events)
  assert list(events["train/loss"]) == [4] and list(events["train/learning_rate"]) == [4]
  assert events["dev/accuracy"] == {4: pytest.approx(scores["accuracy"])}

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


def test_run_errors(tmp_path):
  with pytest.raises(UserError, match="no such input file"):
    gpt_runs.run_train_bpe([], [str(tmp_path / "missing.txt")], 100, str(tmp_path / "x.model"))
  with pytest.raises(UserError, match="--bpe_model is required"):
    gpt_runs.run_gpt_finetuning("polarity", None, GPTFinetuningConfig(), str(tmp_path / "out"))
