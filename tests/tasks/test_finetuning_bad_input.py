"""Bad input and interrupted runs of fine-tuning: an earlier run's outputs survive a failed rerun,
a failed run leaves no directory it created, a run killed outright leaves a staging directory the
next run removes, and bad SQuAD / STS-B data and seeds are refused with the file, place and
value."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import keras
import pytest

from bert_keras import atomic_io, resources
from bert_keras.errors import UserError
from bert_keras.tasks import finetuning
from bert_keras.tasks.finetuning import RunConfig, run_finetuning
from bert_keras.tasks.registry import get_task
from bert_keras.tasks.squad import read_squad
from bert_keras.configs.model import ConfigError
from bert_keras.configs.tasks import TaskConfig, get_task_config
from . import task_fixtures as fx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = dict(max_seq_length=32, train_batch_size=8, num_epochs=1.0, eval_batch_size=16,
            learning_rate=1e-3)
# What an earlier polarity run left in --output_dir (contents only need to be recognisable; its
# config.json records the task, as a run's does, so a new run of that task may replace it).
EARLIER = {"model.keras": b"earlier model", "metrics.json": b'{"earlier": 1}',
           "task_info.json": b'{"earlier": 1}',
           "config.json": b'{"earlier": 1, "task": {"task": "polarity"}}',
           "vocab.txt": b"earlier vocab\n" * 50, "predictions_dev.json": b"[]",
           "predictions_test.json": b"[]"}
EARLIER_MRPC = dict(EARLIER, **{"config.json": b'{"earlier": 1, "task": {"task": "glue/mrpc"}}'})


def _earlier_run(out, earlier=EARLIER):
  os.makedirs(out)
  for name, data in earlier.items():
    with open(os.path.join(out, name), "wb") as f:
      f.write(data)


def _contents(out):
  result = {}
  for name in os.listdir(out):
    with open(os.path.join(out, name), "rb") as f:
      result[name] = f.read()
  return result


def _polarity(out, save_model=True):
  return get_task_config("polarity", **TINY), RunConfig(
      output_dir=out, model="bert_tiny", vocab_file=resources.uncased_vocab_path(),
      max_train_examples=16, save_model=save_model)


@pytest.mark.parametrize("error", [RuntimeError("training failed"), KeyboardInterrupt()])
def test_failure_during_training_keeps_the_earlier_run(tmp_path, monkeypatch, error):
  out = str(tmp_path / "out")
  _earlier_run(out)

  def fit(*args, **kwargs):
    raise error
  monkeypatch.setattr(keras.Model, "fit", fit)
  with pytest.raises(type(error)):
    run_finetuning(*_polarity(out))
  assert _contents(out) == EARLIER  # every earlier file as it was, and no staging left behind


def test_failure_while_copying_the_vocab_keeps_the_earlier_vocab(tmp_path, monkeypatch):
  """The vocab copy is written beside the other new outputs, never over the earlier vocab.txt."""
  out = str(tmp_path / "out")
  _earlier_run(out)
  real_copyfile = finetuning.shutil.copyfile

  def copyfile(src, dst):  # a copy cut short: half the file written, then the disk fills up
    with open(src, "rb") as f:
      data = f.read()
    with open(dst, "wb") as f:
      f.write(data[:len(data) // 2])
    raise OSError(28, "No space left on device")
  monkeypatch.setattr(finetuning.shutil, "copyfile", copyfile)
  with pytest.raises(OSError, match="No space left"):
    run_finetuning(*_polarity(out, save_model=False))
  assert _contents(out) == EARLIER
  monkeypatch.setattr(finetuning.shutil, "copyfile", real_copyfile)

  # A complete rerun then replaces everything and removes what it did not write.
  run_finetuning(*_polarity(out, save_model=False))
  assert sorted(os.listdir(out)) == ["config.json", "metrics.json", "predictions_dev.json",
                                     "task_info.json", "tensorboard", "vocab.txt"]
  with open(os.path.join(out, "vocab.txt"), "rb") as f, \
      open(resources.uncased_vocab_path(), "rb") as g:
    assert f.read() == g.read()
  assert "earlier" not in json.load(open(os.path.join(out, "metrics.json")))


_KILLED_RUN = """
import sys, time, keras
sys.path.insert(0, sys.argv[2])
from bert_keras import atomic_io, resources
from bert_keras.tasks.finetuning import RunConfig, run_finetuning
from bert_keras.configs.tasks import get_task_config
keras.Model.fit = lambda *args, **kwargs: time.sleep(600)  # killed while it trains
run_finetuning(get_task_config("polarity", max_seq_length=32, train_batch_size=8),
               RunConfig(output_dir=sys.argv[1], model="bert_tiny",
                         vocab_file=resources.uncased_vocab_path(), max_train_examples=16))
"""


def test_a_killed_runs_staging_directory_is_removed_by_the_next_run(tmp_path):
  out = str(tmp_path / "out")
  _earlier_run(out)
  proc = subprocess.Popen([sys.executable, "-c", _KILLED_RUN, out, ROOT],
                          env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
  try:
    deadline = time.time() + 120
    while not any(os.path.exists(os.path.join(out, name, "config.json"))
                  for name in os.listdir(out) if name.startswith(".run.staging-")):
      assert proc.poll() is None and time.time() < deadline, "the run never reached training"
      time.sleep(0.2)
  finally:
    proc.send_signal(signal.SIGKILL)
    proc.wait()
  stages = [name for name in os.listdir(out) if name.startswith(".run.staging-")]
  assert len(stages) == 1  # SIGKILL: nothing could clean up
  assert {name: open(os.path.join(out, name), 'rb').read() for name in EARLIER} == EARLIER

  run_finetuning(*_polarity(out, save_model=False))
  assert sorted(os.listdir(out)) == ["config.json", "metrics.json", "predictions_dev.json",
                                     "task_info.json", "tensorboard", "vocab.txt"]


def test_only_dead_runs_stages_of_this_host_are_removed(tmp_path):
  out = tmp_path / "out"
  exited = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
  dead_pid, host = int(exited.stdout), socket.gethostname()
  names = {"dead": f"{host}-{dead_pid}-0", "live": f"{host}-{os.getppid()}-0",
           "mine": f"{host}-{os.getpid()}-0", "other_host": f"{host}.elsewhere-{dead_pid}-0",
           "no_owner": "unnamed"}
  for name in names.values():
    (out / f".run.staging-{name}").mkdir(parents=True)
  (out / f"not_a_stage-{host}-{dead_pid}-0").mkdir()
  assert atomic_io.remove_dead_stages(str(out / ".run")) == [str(out / f".run.staging-{names['dead']}")]
  assert sorted(os.listdir(out)) == sorted([f".run.staging-{names[k]}" for k in names if k != "dead"]
                                           + [f"not_a_stage-{host}-{dead_pid}-0"])


def test_bad_data_leaves_no_new_output_dir(tmp_path):
  data = tmp_path / "data"
  data.mkdir()
  (data / "train.tsv").write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                                  "2\t1\t2\ta\tb\n", encoding="utf-8")
  (data / "dev.tsv").write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\ta\tb\n",
                                encoding="utf-8")
  out = tmp_path / "new" / "out"
  run = RunConfig(data_dir=str(data), output_dir=str(out), model="bert_tiny",
                  vocab_file=resources.uncased_vocab_path())
  with pytest.raises(UserError, match=r"train\.tsv:2: label '2' is not one of"):
    run_finetuning(get_task_config("glue/mrpc", **TINY), run)
  assert sorted(os.listdir(tmp_path)) == ["data"]  # neither out nor its new parent


def test_bad_data_keeps_an_existing_output_dir(tmp_path):
  out = str(tmp_path / "out")
  _earlier_run(out, EARLIER_MRPC)
  run = RunConfig(data_dir=str(tmp_path / "nodata"), output_dir=out, model="bert_tiny",
                  vocab_file=resources.uncased_vocab_path())
  with pytest.raises(UserError, match="no such file"):
    run_finetuning(get_task_config("glue/mrpc", **TINY), run)
  assert _contents(out) == EARLIER_MRPC


# --- SQuAD ---

def _squad(tmp_path, qas, context="the film was good", version="1.1"):
  data = {"version": version, "data": [{"title": "t", "paragraphs": [
      {"context": context, "qas": qas}]}]}
  path = tmp_path / "train.json"
  path.write_text(json.dumps(data), encoding="utf-8")
  return str(path)


def test_squad_all_questions_skipped_says_why(tmp_path):
  path = _squad(tmp_path, [
      {"id": "q1", "question": "how?", "answers": [{"text": "film", "answer_start": 13}]},
      {"id": "q2", "question": "what?", "answers": [{"text": "good", "answer_start": 0}]}])
  with pytest.raises(UserError) as info:
    read_squad(path, training=True, version_2=False)
  message = str(info.value)
  assert message.startswith(f"{path}: no usable questions: 2 of 2 skipped because the answer "
                            "text is not at its answer_start"), message
  assert "(first: data[0].paragraphs[0].qas[0] id 'q1'" in message and "'film'" in message


def test_squad_answer_past_the_end_names_the_end(tmp_path):
  path = _squad(tmp_path, [
      {"id": "q1", "question": "how?", "answers": [{"text": "great", "answer_start": 13}]}])
  with pytest.raises(UserError) as info:
    read_squad(path, training=True, version_2=False)
  message = str(info.value)
  assert "data[0].paragraphs[0].qas[0] (id q1)" in message, message
  assert "answer_start=13 ends at character 18, past the end of the 17-character context" in message
  assert "is outside" not in message
  # A start outside the context is still reported as such.
  path = _squad(tmp_path, [
      {"id": "q1", "question": "how?", "answers": [{"text": "x", "answer_start": 40}]}])
  with pytest.raises(UserError, match="answer_start=40 is outside the 17-character context"):
    read_squad(path, training=True, version_2=False)


@pytest.mark.parametrize("ids", [("q1", "q1"), (1, "1"), (7, 7)])
def test_squad_duplicate_ids_are_refused(tmp_path, ids):
  path = _squad(tmp_path, [
      {"id": ids[0], "question": "how?", "answers": [{"text": "good", "answer_start": 13}]},
      {"id": ids[1], "question": "what?", "answers": [{"text": "the film", "answer_start": 0}]}])
  for training in (True, False):
    with pytest.raises(UserError) as info:
      read_squad(path, training=training, version_2=False)
    message = str(info.value)
    assert message.startswith(f"{path}: duplicate question id"), message
    assert f"data[0].paragraphs[0].qas[1] has id {ids[1]!r}" in message
    assert f"data[0].paragraphs[0].qas[0] has id {ids[0]!r}" in message


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None])
def test_squad_v2_is_impossible_must_be_a_json_boolean(tmp_path, value):
  path = _squad(tmp_path, [{"id": "q1", "question": "how?", "is_impossible": value,
                            "answers": [{"text": "good", "answer_start": 13}]}], version="v2.0")
  with pytest.raises(UserError, match=r"qas\[0\]: 'is_impossible' is .*expected true/false"):
    read_squad(path, training=True, version_2=True)


def test_squad_v2_impossible_with_answers_is_refused(tmp_path):
  path = _squad(tmp_path, [{"id": "q1", "question": "how?", "is_impossible": True,
                            "answers": [{"text": "good", "answer_start": 13}]}], version="v2.0")
  for training in (True, False):
    with pytest.raises(UserError, match=r"qas\[0\] \(id q1\): is_impossible is true but "
                                        r"'answers' has 1 answer"):
      read_squad(path, training=training, version_2=True)


def test_squad_v2_official_layout_is_accepted(tmp_path):
  """Official v2.0: unanswerable questions have answers=[] and the span in plausible_answers."""
  path = os.path.join(fx.write_json(tmp_path, "train-v2.0.json", fx.SQUAD_V2), "train-v2.0.json")
  for training in (True, False):
    examples = read_squad(path, training=training, version_2=True)
    assert [(e.qas_id, e.is_impossible) for e in examples] == [("a1", False), ("a2", True)]


# --- STS-B ---

STSB_HEADER = ("index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2"
               "\tscore\n")


def _stsb_row(i, score):
  return f"{i}\tg\tf\ty\t{i}\ts\ts\tthe film\ta film\t{score}\n"


@pytest.mark.parametrize("score", ["5.5", "-0.1", "50", "nan", "inf"])
def test_stsb_score_outside_0_to_5_is_refused(tmp_path, score):
  (tmp_path / "train.tsv").write_text(
      STSB_HEADER + _stsb_row(0, "0") + _stsb_row(1, "5.0") + _stsb_row(2, score), encoding="utf-8")
  task = get_task(get_task_config("glue/stsb", **TINY))
  with pytest.raises(UserError, match=rf"train\.tsv:4: label '{score}' is outside glue/stsb's "
                                      r"score range \[0, 5\]"):
    task.read_examples(str(tmp_path), "train")


def test_stsb_scores_at_the_ends_of_the_range_are_read(tmp_path):
  (tmp_path / "train.tsv").write_text(
      STSB_HEADER + _stsb_row(0, "0") + _stsb_row(1, "5.000") + _stsb_row(2, "2.4"),
      encoding="utf-8")
  task = get_task(get_task_config("glue/stsb", **TINY))
  assert [e.label for e in task.read_examples(str(tmp_path), "train")] == [0.0, 5.0, 2.4]


# --- seed ---

@pytest.mark.parametrize("seed", [-1, 2**32, 1.5, True, "3"])
def test_seed_out_of_range_is_a_config_error(seed):
  expected = r"an integer" if isinstance(seed, (bool, float, str)) else r"in \[0, 4294967295\]"
  with pytest.raises(ConfigError, match=rf"^seed={seed!r} must be {expected}"):
    TaskConfig(seed=seed)
  with pytest.raises(ConfigError, match="^seed="):
    get_task_config("polarity", seed=seed)


def test_seed_range_ends_are_accepted():
  assert TaskConfig(seed=0).seed == 0 and TaskConfig(seed=2**32 - 1).seed == 2**32 - 1
  keras.utils.set_random_seed(2**32 - 1)  # the largest accepted seed is one Keras accepts


@pytest.mark.slow
def test_negative_seed_flag_exits_2_without_traceback(tmp_path):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",  # this tree's code, whatever is installed
             PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
  result = subprocess.run(
      [sys.executable, os.path.join(ROOT, "scripts", "run_finetuning.py"), "--task=polarity",
       "--model=bert_tiny", f"--vocab_file={resources.uncased_vocab_path()}",
       "--seed=-1", f"--output_dir={tmp_path}/out"],
      capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
  assert result.returncode == 2, result.stderr[-2000:]
  assert "Traceback" not in result.stderr
  assert result.stderr.strip().splitlines()[-1] == (
      "error: seed=-1 must be in [0, 4294967295]")
  assert not os.path.exists(tmp_path / "out")
