"""Files written by this version (0.1.0) load in the current code and give the same outputs.

The fixtures (tests/compat/fixtures/, README.md there) are what users of 0.1.0 have on disk: a
pretraining output directory with its Trainer checkpoint and export/, a pretrainer .keras, a
fine-tuned classifier's model.keras and its text-in SavedModel, a GPT-1 decoder.keras. Each test
loads one the way a user does and compares with the outputs the writing code gave on the same
inputs; a load that silently left fresh weights (or fresh optimizer slots, or step 0) fails the
comparison. Written by tests/compat/make_fixtures.py; a change that fails here changes a file
format users have: regenerate them only on purpose, in the commit that says so.
"""

import json
import math
import os
import shutil
import tarfile
import warnings

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import keras_classes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "compat", "fixtures")
MODEL_DIR = os.path.join(FIXTURES, "pretraining_model_dir")
# Float tolerance: the same weights through a reimplemented (e.g. fused or reordered) kernel.
TOLERANCE = dict(rtol=1e-5, atol=1e-5)
# Values of the expected_*.npz files that are not model outputs.
NOT_OUTPUTS = ("iterations", "slot_norms", "train_loss_step_3")


def fixture(*parts):
  return os.path.join(FIXTURES, *parts)


def expected(name):
  with np.load(fixture(name)) as values:
    return {k: values[k] for k in values.files}


def inputs(with_positions=True):
  values = expected("fixed_inputs.npz")
  if not with_positions:
    values.pop("masked_lm_positions")
  return values


def assert_outputs(outputs, want, prefix=""):
  """Every array of `want` (keys `prefix` + output name; list outputs as name_i) equals `outputs`."""
  flat = {}
  for key, value in outputs.items():
    for i, v in enumerate(value) if isinstance(value, (list, tuple)) else [(None, value)]:
      flat[prefix + (key if i is None else f"{key}_{i}")] = np.asarray(v)
  names = sorted(k for k in want if k.startswith(prefix) and k not in NOT_OUTPUTS)
  assert names, f"no expected outputs named {prefix}*"
  for name in names:
    assert name in flat, f"{name} missing from the outputs {sorted(flat)}"
    np.testing.assert_allclose(flat[name], want[name], err_msg=name, **TOLERANCE)


# === .keras files (keras.saving.load_model after bert_keras.keras_classes.register_all) ===

def test_pretrainer_keras():
  model = keras_classes.load_model(fixture("pretrainer.keras"))
  assert_outputs(model(inputs(), training=False), expected("expected_pretrainer.npz"))


def test_encoder_keras():
  model = keras_classes.load_model(fixture("pretraining_model_dir", "export", "encoder.keras"))
  assert_outputs(model(inputs(with_positions=False), training=False),
                 expected("expected_encoder.npz"))


def test_classifier_keras():
  model = keras_classes.load_model(fixture("classifier_finetune_dir", "model.keras"))
  assert_outputs(model(inputs(with_positions=False), training=False),
                 expected("expected_classifier.npz"))


def test_gpt_decoder_keras():
  model = keras_classes.load_model(fixture("gpt_pretraining_dir", "decoder.keras"))
  want = expected("expected_gpt_decoder.npz")
  feed = {k: want.pop(k) for k in ("input_word_ids", "input_mask")}
  assert_outputs(model(feed, training=False), want)


# === .weights.h5 ===

def test_encoder_weights_h5():
  """A BertEncoder built from model_config.json, then `load_weights(encoder.weights.h5)`."""
  from bert_keras.models.bert_encoder import BertEncoder  # pylint: disable=import-outside-toplevel
  from bert_keras.configs.model import ModelConfig  # pylint: disable=import-outside-toplevel
  export = fixture("pretraining_model_dir", "export")
  encoder = BertEncoder.from_model_config(
      ModelConfig.from_file(os.path.join(export, "model_config.json")))
  encoder.load_weights(os.path.join(export, "encoder.weights.h5"))
  assert_outputs(encoder(inputs(with_positions=False), training=False),
                 expected("expected_encoder.npz"))


def test_model_dir_as_init_checkpoint():
  """run_finetuning / convert_checkpoint's loader, given the model_dir (it reads export/)."""
  from bert_keras import interop  # pylint: disable=import-outside-toplevel
  encoder, info = interop.load_encoder(MODEL_DIR)
  assert not info.missing, info.missing
  assert_outputs(encoder(inputs(with_positions=False), training=False),
                 expected("expected_encoder.npz"))


# === The training checkpoint (model, optimizer slots, step, data position) ===

@pytest.fixture
def model_dir_copy(tmp_path, monkeypatch):
  """A copy of the model_dir (a resume writes into it); the working directory is the repository
  root, against which training_config.json's input_files and vocab_file are relative."""
  copy = str(tmp_path / "model_dir")
  shutil.copytree(MODEL_DIR, copy)
  monkeypatch.chdir(ROOT)
  return copy


def training_config(model_dir, **changes):
  """The run's training_config.json, as `--config_file=... --output_dir=...` reads it, without
  a warning."""
  from bert_keras.configs.training import TrainingConfig  # pylint: disable=import-outside-toplevel
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    config = TrainingConfig.from_file(os.path.join(model_dir, "training_config.json"))
  return config.override(output_dir=model_dir, **changes)


def slot_norms(variables):
  """The L2 norm of every non-scalar optimizer variable (the Adam moments), sorted: independent
  of variable names and order."""
  return sorted(float(np.linalg.norm(np.asarray(v, np.float64))) for v in variables
                if len(v.shape) > 0)


def checkpoint_slot_norms(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return slot_norms(reader.get_tensor(name) for name, shape in tf.train.list_variables(prefix)
                    if name.startswith("optimizer/") and shape)


def test_trainer_restores_step_weights_and_optimizer_slots(model_dir_copy):
  """The pretraining Trainer's resume path (`Trainer.restore`, as run_pretraining calls it)."""
  # pylint: disable=import-outside-toplevel
  from bert_keras.training import distribute
  from bert_keras.training.pretrain import build_optimizer, build_pretrainer
  from bert_keras.training.pretraining_task import PretrainingTask
  from bert_keras.training.trainer import Trainer
  config = training_config(model_dir_copy)
  strategy = distribute.get_strategy(config.runtime.distribution_strategy)
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.model.objective),
                    config.override(output_dir=model_dir_copy))
  want = expected("expected_checkpoint_step_2.npz")
  assert max(slot_norms(optimizer.variables)) == 0.0  # fresh: what a restore must replace
  assert trainer.restore()
  assert int(trainer.global_step.numpy()) == 2
  assert int(np.asarray(optimizer.iterations)) == int(want["iterations"]) == 2
  norms = slot_norms(optimizer.variables)
  assert len(norms) == len(want["slot_norms"]) and min(want["slot_norms"][-10:]) > 0
  np.testing.assert_allclose(norms, want["slot_norms"], rtol=1e-6, atol=0)
  assert_outputs(model(inputs(), training=False), want)


@pytest.mark.slow  # ~12 CPU-seconds: traces the train step, compiles the loss, saves export/
def test_run_pretraining_resumes_the_checkpoint(model_dir_copy):
  """Re-running the run's command with num_train_steps=3 (scripts/run_pretraining.py ->
  run_pretraining) resumes at step 2 and reaches what the writing code reached at step 3: the same
  loss, optimizer slots and exported encoder. A restart from step 0, fresh weights or fresh slots
  would give other values."""
  from bert_keras.training.pretrain import run_pretraining  # pylint: disable=import-outside-toplevel
  want = expected("expected_resume.npz")
  result = run_pretraining(training_config(model_dir_copy, num_train_steps=3))
  assert result["train"]["step"] == 3
  loss = result["train"]["loss"]
  assert math.isfinite(loss)
  np.testing.assert_allclose(loss, want["train_loss_step_3"], rtol=1e-5)
  with open(os.path.join(model_dir_copy, "history.jsonl"), encoding="utf-8") as f:
    steps = [json.loads(line)["step"] for line in f]
  assert steps == [1, 2, 3], steps  # steps 1-2 from the saved run's history, 3 from this one
  latest = tf.train.latest_checkpoint(model_dir_copy)
  assert latest.endswith("ckpt-3"), latest
  reader = tf.train.load_checkpoint(latest)
  assert int(reader.get_tensor("global_step/.ATTRIBUTES/VARIABLE_VALUE")) == 3
  np.testing.assert_allclose(checkpoint_slot_norms(latest), want["slot_norms"], rtol=1e-5)
  encoder = keras_classes.load_model(os.path.join(model_dir_copy, "export", "encoder.keras"))
  assert_outputs(encoder(inputs(with_positions=False), training=False), want, prefix="encoder/")


# === The text-in SavedModel ===

def test_exported_classifier_savedmodel(tmp_path):
  """`tf.saved_model.load` + the serving_default signature (raw strings in), and `.serve`."""
  import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
  with tarfile.open(fixture("classifier_savedmodel.tar.xz")) as tar:
    tar.extractall(tmp_path, filter="data")
  with open(fixture("expected_savedmodel.json"), encoding="utf-8") as f:
    want = json.load(f)
  loaded = tf.saved_model.load(str(tmp_path / "classifier_savedmodel"))
  texts = tf.constant(want["text_a"])
  got = loaded.signatures["serving_default"](text_a=texts)
  for outputs in (got, loaded.serve(texts)):
    np.testing.assert_allclose(outputs["probabilities"].numpy(),
                               want["serving_default"]["probabilities"], rtol=0, atol=2e-6)
    assert outputs["label_id"].numpy().tolist() == want["serving_default"]["label_id"]
    assert [s.decode() for s in outputs["label"].numpy()] == want["serving_default"]["label"]


@pytest.mark.slow  # ~10 CPU-seconds: traces the serving graph
def test_finetuned_dir_exports_again(tmp_path):
  """scripts/export_model.py --finetuned_dir=<a saved run_finetuning output> (run_export) in the
  current code serves what the saved export served."""
  import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
  from bert_keras.export.export_config import ExportConfig, run_export  # pylint: disable=import-outside-toplevel
  finetune_dir = str(tmp_path / "finetune")
  shutil.copytree(fixture("classifier_finetune_dir"), finetune_dir)
  export_dir = str(tmp_path / "export")
  run_export(ExportConfig(output_dir=export_dir, finetuned_dir=finetune_dir))
  with open(fixture("expected_savedmodel.json"), encoding="utf-8") as f:
    want = json.load(f)
  got = tf.saved_model.load(export_dir).signatures["serving_default"](
      text_a=tf.constant(want["text_a"]))
  np.testing.assert_allclose(got["probabilities"].numpy(),
                             want["serving_default"]["probabilities"], rtol=0, atol=2e-6)
  assert got["label_id"].numpy().tolist() == want["serving_default"]["label_id"]
