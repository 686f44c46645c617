"""Records made with a larger vocabulary than the model's are refused before training, with one
error naming the files, the vocabulary size or largest id, the model's vocab_size and the
--model_overrides that fits. They used to train until a batch held an id past the embedding table
and die in the gather (`InvalidArgumentError: indices[12,3] = 2290 is not in [0, 2000)`), exit 1,
after model_dir was created."""

import json
import os

import pytest

from bert_keras.errors import UserError
from bert_keras.training.input_files import resolve_input_files
from bert_keras.training.pretrain import run_pretraining
from bert_keras.training.vocab_fit import check_vocab_fits
from bert_keras.configs.training import TrainingConfig
from tests.reliability import bad_inputs as B
from tests.training import pretraining_runs as R
from tests.training.pretraining_records import write_real_records, write_records

# The real-text records' vocabulary: bert-base-uncased's first 1000 entries plus the pieces the
# text needs (ids 1000 and up), so a model of 1000 rows cannot embed them.
SMALL = 1000


@pytest.fixture(scope="module")
def real(tmp_path_factory):
  """(records glob, vocabulary size, summary.json path) of create_pretraining_data's records."""
  pattern, size = write_real_records(str(tmp_path_factory.mktemp("vocab_fit") / "data"))
  return pattern, size, os.path.join(os.path.dirname(pattern), "summary.json")


def _tiny_config(pattern, model_dir, vocab_size, **extra):
  model = dict(R.TINY_MODEL, vocab_size=vocab_size)
  return TrainingConfig.from_flat(model="bert_tiny", model_overrides=model, input_files=pattern,
                        max_seq_length=32, max_predictions_per_seq=5, train_batch_size=8,
                        num_train_steps=2, num_warmup_steps=1, vocab_size=0, log_every=1,
                        output_dir=str(model_dir), **extra)


def test_summary_records_the_vocabulary_size(real):
  pattern, size, summary = real
  with open(summary, encoding="utf-8") as f:
    values = json.load(f)
  with open(values["config"]["vocab_file"], encoding="utf-8") as f:
    assert values["vocab_size"] == size == sum(1 for _ in f)


def test_script_refuses_a_model_smaller_than_the_vocabulary(real, tmp_path):
  """The user's view: one error line, exit 2, no traceback, no model_dir."""
  pattern, size, summary = real
  model_dir = str(tmp_path / "run")
  cmd = R.tiny_flags(pattern, model_dir, 4, vocab_size=SMALL)
  result = B.run_script("run_pretraining", *cmd[2:], timeout=300)
  line = B.user_error_line(
      result, f"--input_files={pattern}", f"vocabulary of {size} tokens", summary,
      f"the model's vocab_size is {SMALL}", '--model_overrides=\'{', f'"vocab_size": {size}')
  assert '"num_layers": 2' in line, line  # the fix keeps the other overrides
  assert not os.path.exists(model_dir)


def test_summary_without_vocab_size_counts_the_vocab_files_lines(real, tmp_path):
  """A summary written before vocab_size was recorded: its config's vocab_file is counted."""
  pattern, size, summary = real
  data = tmp_path / "old"
  data.mkdir()
  with open(summary, encoding="utf-8") as f:
    values = json.load(f)
  del values["vocab_size"]
  for entry in values["files"]:
    with open(os.path.join(os.path.dirname(pattern), entry["name"]), "rb") as src:
      (data / entry["name"]).write_bytes(src.read())
  (data / "summary.json").write_text(json.dumps(values), encoding="utf-8")
  with pytest.raises(UserError) as info:
    check_vocab_fits(resolve_input_files(str(data / "pretraining-*.tfrecord")), "input_files",
                     SMALL, "bert_tiny", {})
  message = str(info.value)
  assert f"the {size} lines of {values['config']['vocab_file']}" in message, message
  assert f'--model_overrides=\'{{"vocab_size": {size}}}\'' in message, message


def test_a_model_as_large_as_the_vocabulary_passes(real):
  pattern, size, _ = real
  check_vocab_fits(resolve_input_files(pattern), "input_files", size, "bert_tiny", {})
  check_vocab_fits(resolve_input_files(pattern), "input_files", size + 100, "bert_tiny", {})


def test_records_without_summary_are_checked_by_their_largest_id(tmp_path):
  """No summary.json (records from elsewhere): the largest id of the first records decides."""
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=16, vocab_size=128)
  with pytest.raises(UserError) as info:
    run_pretraining(_tiny_config(pattern, tmp_path / "run", vocab_size=110))
  message = str(info.value)
  assert f"--input_files={pattern}: {tmp_path / 'data'}/part-0000" in message, message
  assert "holds token id 12" in message and "the model's vocab_size is 110" in message, message
  assert "with N the line count of the vocab.txt" in message, message
  assert not os.path.exists(tmp_path / "run")
  check_vocab_fits(resolve_input_files(pattern), "input_files", 128, "bert_tiny", {})


def test_eval_records_are_checked_too(tmp_path):
  train = write_records(str(tmp_path / "train"), num_files=1, per_file=16, vocab_size=100)
  held_out = write_records(str(tmp_path / "eval"), num_files=1, per_file=16, vocab_size=128)
  with pytest.raises(UserError, match=r"^--eval_input_files=.*eval/part-00000\.tfrecord holds "
                     r"token id 1[0-2]\d.*vocab_size is 110"):
    run_pretraining(_tiny_config(train, tmp_path / "run", vocab_size=110,
                                 eval_input_files=held_out))
  assert not os.path.exists(tmp_path / "run")
