"""run_pretraining across restarts: history.jsonl keeps the rows of the earlier processes of the
run; a resume refuses a changed config that it cannot continue; a run that fails its checks
before training creates no model_dir."""

import json
import os

import pytest

from bert_keras.errors import UserError
from bert_keras.training import trainer as trainer_lib
from bert_keras.training.pretrain import run_pretraining
from bert_keras.configs.training import TrainingConfig
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=1, per_file=48)


def _config(pattern, model_dir, **kw):
  # One layer, no evaluation: nothing checked here depends on either.
  values = dict(input_files=pattern, model="bert_tiny",
                model_overrides=dict(TINY_MODEL, num_layers=1), max_seq_length=32,
                max_predictions_per_seq=5, train_batch_size=8, num_train_steps=4,
                num_warmup_steps=1, learning_rate=1e-3, checkpoint_every=2, log_every=1,
                output_dir=str(model_dir), vocab_size=128)
  values.update(kw)
  return TrainingConfig.from_flat(**values)


def _rows(model_dir):
  with open(os.path.join(model_dir, "history.jsonl"), encoding="utf-8") as f:
    return [json.loads(line) for line in f]


class _Killed(Exception):
  pass


def test_history_survives_a_kill_a_resume_and_a_rerun(pattern, tmp_path, monkeypatch):
  model_dir = tmp_path / "run"
  log_train = trainer_lib.Trainer._log_train

  def dies_at_step_5(self, step, *args, **kwargs):
    if step == 5:
      raise _Killed()
    return log_train(self, step, *args, **kwargs)

  monkeypatch.setattr(trainer_lib.Trainer, "_log_train", dies_at_step_5)
  with pytest.raises(_Killed):
    run_pretraining(_config(pattern, model_dir, num_train_steps=6))
  monkeypatch.undo()
  # Written with checkpoint 4: the killed process's rows are on disk.
  assert [r["step"] for r in _rows(model_dir)] == [1, 2, 3, 4]
  with open(model_dir / "history.jsonl", "a", encoding="utf-8") as f:
    f.write(json.dumps({"step": 5, "split": "train", "loss": -1.0}) + "\n")  # after checkpoint 4

  run_pretraining(_config(pattern, model_dir, num_train_steps=6))
  rows = _rows(model_dir)
  assert [r["step"] for r in rows] == [1, 2, 3, 4, 5, 6]
  assert rows[4]["loss"] > 0  # the resumed process's step 5, not the stale row
  # Re-running the finished run trains nothing and keeps every row.
  run_pretraining(_config(pattern, model_dir, num_train_steps=6))
  assert _rows(model_dir) == rows


def test_resume_refuses_a_changed_config_and_keeps_its_record(pattern, tmp_path):
  model_dir = tmp_path / "run"
  run_pretraining(_config(pattern, model_dir, num_train_steps=2))
  recorded = (model_dir / "training_config.json").read_text()
  changes = [dict(train_batch_size=16, seed=7), dict(mixed_precision="mixed_float16"),
             dict(model_overrides=dict(TINY_MODEL, num_layers=2)), dict(objective="mlm"),
             dict(max_seq_length=64, max_predictions_per_seq=10)]
  for change in changes:
    with pytest.raises(UserError) as error:
      run_pretraining(_config(pattern, model_dir, num_train_steps=3, **change))
    message = str(error.value)
    assert "--init_checkpoint" in message and "new --output_dir" in message, message
    for name, value in change.items():
      if name == "mixed_precision":
        assert "loss scaling (mixed_precision mixed_float16): False in" in message, message
        assert "True now" in message, message
      elif name == "model_overrides":
        assert "model num_layers" in message and "1 in" in message and "2 now" in message, message
      else:
        assert f"{name}: " in message and f"{value!r} now" in message, message
    assert (model_dir / "training_config.json").read_text() == recorded
  # The schedule's length, logging and checkpointing may change; so may the accumulation (the
  # same global batch), float32 <-> mixed_bfloat16 (the same variables) and the text of
  # input_files when it names the same files.
  same_files = os.path.join(os.path.dirname(pattern), ".", os.path.basename(pattern)) + ", "
  result = run_pretraining(_config(pattern, model_dir, num_train_steps=3, log_every=3,
                                   checkpoint_every=3, gradient_accumulation_steps=2,
                                   mixed_precision="mixed_bfloat16", input_files=same_files))
  assert result["train"]["step"] == 3
  recorded = json.loads((model_dir / "training_config.json").read_text())
  assert recorded["optimizer"]["num_train_steps"] == 3  # written nested again


def test_resume_refuses_another_phase_and_names_the_phase_2_command(pattern, tmp_path):
  """A phase-2 command pointed at the phase-1 model_dir (same lengths and batch) used to resume the
  phase-1 run with phase 2's step range, its data stream continuing at phase 1's position."""
  phase1 = tmp_path / "phase1"
  common = dict(num_train_steps=4, phase1_fraction=0.5)
  run_pretraining(_config(pattern, phase1, phase=1, **common))
  recorded = (phase1 / "training_config.json").read_text()
  checkpoints = sorted(os.listdir(phase1))
  with pytest.raises(UserError) as error:
    run_pretraining(_config(pattern, phase1, phase=2, init_checkpoint=str(phase1), **common))
  message = str(error.value)
  assert f"phase: 1 in {phase1 / 'training_config.json'}, 2 now" in message, message
  assert ("phase 2 takes a new --output_dir and --init_checkpoint=<the phase-1 output_dir>"
          in message), message
  assert (phase1 / "training_config.json").read_text() == recorded
  assert sorted(os.listdir(phase1)) == checkpoints
  # Phase 1 resumed as the whole schedule is another run too.
  with pytest.raises(UserError, match="phase: 1 in .*, 0 now") as refused:
    run_pretraining(_config(pattern, phase1, phase=0, **common))
  assert "phase 2 takes" not in str(refused.value)  # the hint is for a phase-2 command only
  # The README's phase-2 command: a new model_dir, from the phase-1 one.
  result = run_pretraining(_config(pattern, tmp_path / "phase2", phase=2,
                                   init_checkpoint=str(phase1), **common))
  assert result["train"]["step"] == 4


def test_resume_with_another_lr_schedule_warns_with_both_rates(pattern, tmp_path, caplog):
  """A changed schedule is allowed (a longer run, a lower peak), but not silently: the warning
  names each changed field and the rate the next update gets under both schedules."""
  model_dir = tmp_path / "run"
  run_pretraining(_config(pattern, model_dir, num_train_steps=2))
  caplog.clear()
  with caplog.at_level("WARNING"):
    run_pretraining(_config(pattern, model_dir, num_train_steps=4, learning_rate=5e-4,
                            phase1_fraction=0.5))
  warnings = [r.getMessage() for r in caplog.records if "learning-rate schedule" in r.getMessage()]
  assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
  text = warnings[0]
  assert "num_train_steps: 2 in" in text and "4 now" in text, text
  assert "learning_rate: 0.001 in" in text and "0.0005 now" in text, text
  assert "phase1_fraction" not in text, text  # not part of the schedule of a phase-0 run
  # Warmup 1, linear decay: step 2 of 4 -> 5e-4 * (4 - 2) / 3; the recorded schedule ended at 0.
  assert "after step 2 uses learning rate 0.0003333, the recorded schedule's 0" in text, text
  caplog.clear()
  with caplog.at_level("WARNING"):
    run_pretraining(_config(pattern, model_dir, num_train_steps=4, learning_rate=5e-4))
  assert not [r for r in caplog.records if "learning-rate schedule" in r.getMessage()]


def test_failed_checks_create_no_model_dir(pattern, tmp_path):
  model_dir = tmp_path / "new"
  with pytest.raises(UserError, match="matches no file"):
    run_pretraining(_config("/nonexistent/*.tfrecord", model_dir))
  with pytest.raises(UserError, match="init_checkpoint .*: no such file"):
    run_pretraining(_config(pattern, model_dir, init_checkpoint=str(tmp_path / "nothing")))
  assert not model_dir.exists()
  a_file = tmp_path / "file"
  a_file.write_text("not a directory")
  with pytest.raises(UserError, match=r"--output_dir=\S+ is a file"):
    run_pretraining(_config(pattern, a_file))
  with pytest.raises(UserError, match=r"--output_dir=\S+ is under the file"):
    run_pretraining(_config(pattern, a_file / "run"))
