"""export/vocab.txt never fails a run after training: the vocabulary is resolved before training (a
summary.json that cannot be read is then a warning), a copy that fails at export is a warning with
the encoder files written and no partial vocab.txt, and a rerun exports again. A caller that knows
the vocabulary (the pretrainer component, whose held-out split has no summary.json) passes it as
vocab_file and gets it copied, with no warning."""

import logging
import os
import shutil

import pytest

from bert_keras.errors import UserError
from bert_keras.training.pretrain import build_pretrainer, export_encoder, run_pretraining
from bert_keras.configs.training import TrainingConfig
from tests.training import pretraining_runs as R
from tests.training.pretraining_records import write_real_records

ENCODER_FILES = {"encoder.weights.h5", "encoder.keras", "model_config.json"}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
  """(directory of create_pretraining_data's shards and summary.json, vocab.txt, its size)."""
  root = tmp_path_factory.mktemp("export_vocab")
  pattern, size = write_real_records(str(root / "data"))
  return os.path.dirname(pattern), str(root / "data" / "vocab.txt"), size


def _copy(real, directory, summary=True):
  """The shards (and summary.json) of `real` in `directory`; returns their glob."""
  source = real[0]
  os.makedirs(directory)
  for name in os.listdir(source):
    if name.endswith(".tfrecord") or (summary and name == "summary.json"):
      shutil.copyfile(os.path.join(source, name), os.path.join(directory, name))
  return os.path.join(directory, "pretraining-*.tfrecord")


def _config(pattern, model_dir, vocab_size, **extra):
  return TrainingConfig.from_flat(model="bert_tiny",
                        model_overrides=dict(R.TINY_MODEL, vocab_size=vocab_size),
                        input_files=pattern, max_seq_length=32, max_predictions_per_seq=5,
                        train_batch_size=8, num_train_steps=2, num_warmup_steps=1,
                        checkpoint_every=2, log_every=1, output_dir=str(model_dir), **extra)


def _warnings(caplog):
  return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_summary_json_that_is_a_directory_fails_neither_the_run_nor_its_rerun(
    real, tmp_path, caplog):
  pattern = _copy(real, str(tmp_path / "data"), summary=False)
  os.mkdir(tmp_path / "data" / "summary.json")
  config = _config(pattern, tmp_path / "run", real[2])
  for _ in range(2):  # the rerun restores at the end step and exports again
    caplog.clear()
    with caplog.at_level(logging.INFO):
      run_pretraining(config)
    export = tmp_path / "run" / "export"
    assert set(os.listdir(export)) == ENCODER_FILES  # no vocab.txt, no temporary file
    warned = [m for m in _warnings(caplog) if "summary.json cannot be read" in m]
    assert len(warned) == 2, _warnings(caplog)  # before training, then at export
    assert "no vocab.txt will be copied" in warned[0] and "no vocab.txt copied" in warned[1]


def test_the_records_vocabulary_is_copied(real, tmp_path, caplog):
  pattern = _copy(real, str(tmp_path / "data"))
  with caplog.at_level(logging.INFO):
    run_pretraining(_config(pattern, tmp_path / "run", real[2]))
  with open(tmp_path / "run" / "export" / "vocab.txt", "rb") as a, open(real[1], "rb") as b:
    assert a.read() == b.read()
  assert not [m for m in _warnings(caplog) if "vocab.txt" in m], _warnings(caplog)


def test_a_vocab_file_without_summary_is_copied_with_no_warning(real, tmp_path, caplog):
  """The pretrainer component's case: a held-out split file in a directory without summary.json."""
  pattern = _copy(real, str(tmp_path / "data"), summary=False)
  with caplog.at_level(logging.INFO):
    run_pretraining(_config(pattern, tmp_path / "run", real[2], vocab_file=real[1]))
  with open(tmp_path / "run" / "export" / "vocab.txt", "rb") as a, open(real[1], "rb") as b:
    assert a.read() == b.read()
  assert not [m for m in _warnings(caplog) if "vocab.txt" in m], _warnings(caplog)


def test_a_vocab_file_of_another_size_is_refused_before_training(real, tmp_path):
  pattern = _copy(real, str(tmp_path / "data"), summary=False)
  with pytest.raises(UserError, match=rf"vocab_file {real[1]} has {real[2]} entries but the model "
                     rf"has vocab_size={real[2] + 1}"):
    run_pretraining(_config(pattern, tmp_path / "run", real[2] + 1, vocab_file=real[1]))
  with pytest.raises(UserError, match="no such file"):
    run_pretraining(_config(pattern, tmp_path / "run", real[2], vocab_file=str(tmp_path / "no")))
  assert not os.path.exists(tmp_path / "run")


def test_a_copy_that_fails_at_export_is_a_warning(real, tmp_path, caplog):
  """The vocabulary found before training is unreadable at export (here: now a directory)."""
  pattern = _copy(real, str(tmp_path / "data"), summary=False)
  config = _config(pattern, tmp_path / "run", real[2])
  export = tmp_path / "export"
  os.mkdir(tmp_path / "gone")
  with caplog.at_level(logging.WARNING):
    export_encoder(build_pretrainer(config), config, str(export), (str(tmp_path / "gone"), ""))
  assert set(os.listdir(export)) == ENCODER_FILES
  assert any(f"copying {tmp_path / 'gone'} failed" in m for m in _warnings(caplog)), caplog.text


def test_the_pretrainer_component_passes_its_vocabulary(tmp_path, caplog):
  """heldout_fraction > 0: the run trains on a split file with no summary.json beside it."""
  # pylint: disable=import-outside-toplevel
  from bert_keras.orchestration.base_executor import ExecutionContext
  from bert_keras.orchestration.standard_artifacts import Examples, Model, Vocabulary
  from components.checkpoint_importer.executor import ENCODER_DIR
  from components.pretrainer.executor import PretrainerExecutor
  from tests.training.pretraining_records import write_records
  write_records(str(tmp_path / "examples"), num_files=1, per_file=64, seed=3)
  examples = Examples(str(tmp_path / "examples"))
  examples.properties.update(file_pattern="part-*.tfrecord", max_seq_length=32,
                             max_predictions_per_seq=5)
  vocabulary = Vocabulary(str(tmp_path / "vocabulary"))
  os.makedirs(vocabulary.uri)
  special = {0: "[PAD]", 100: "[UNK]", 101: "[CLS]", 102: "[SEP]", 103: "[MASK]"}
  with open(vocabulary.path("vocab.txt"), "w", encoding="utf-8") as f:
    f.write("".join(special.get(i, f"tok{i}") + "\n" for i in range(R.TINY_MODEL["vocab_size"])))
  model = Model(str(tmp_path / "model"))
  os.makedirs(model.uri)
  executor = PretrainerExecutor(ExecutionContext(component_name="pretrainer",
                                                 tmp_dir=str(tmp_path / "tmp"),
                                                 log_fn=lambda _: None))
  training = dict(model="bert_tiny", model_overrides=dict(R.TINY_MODEL, num_layers=1),
                  train_batch_size=8, num_train_steps=2, num_warmup_steps=1, log_every=1,
                  checkpoint_every=2)
  with caplog.at_level(logging.INFO):
    executor.run({"examples": examples, "vocabulary": vocabulary}, {"model": model},
                 {"training": training, "heldout_fraction": 0.125})
  assert not [m for m in _warnings(caplog) if "vocab.txt" in m], _warnings(caplog)
  with open(os.path.join(model.path(ENCODER_DIR), "vocab.txt"), "rb") as a, open(
      vocabulary.path("vocab.txt"), "rb") as b:
    assert a.read() == b.read()
