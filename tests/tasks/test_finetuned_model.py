"""Evaluate-only and predict-only runs on a fine-tuned output directory, the official submission
files, the one --data_dir rule and the one naming rule of prediction files."""

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks import finetuned_model, finetuning
from bert_keras.tasks.finetuning import RunConfig, run_finetuning
from bert_keras.tasks.registry import get_task, task_names
from bert_keras.configs.tasks import get_task_config
from tests.reliability import bad_inputs as B
from . import task_fixtures as fx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = dict(max_seq_length=32, train_batch_size=8, num_epochs=1.0, eval_batch_size=16,
            learning_rate=1e-3)
MRPC_TRAIN = [["1", "1", "2", "The cat sat.", "A cat was sitting."],
              ["0", "3", "4", "It rains.", "The market fell."]]
# The first pair is longer than the 16 bucket, the second shorter: predicted in length buckets,
# they run in separate batches, in reverse order.
MRPC_TEST = [["0", "11", "12", "He left the old house by the river early this morning.",
              "He went home soon after the long meeting in town."],
             ["7", "13", "14", "Prices rose.", "Birds sing."]]


def _tsv(path, header, rows):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join("\t".join(r) for r in [header] + rows) + "\n")


def _finetune(task, out, data_dir="", save_model=True, **overrides):
  run = RunConfig(data_dir=data_dir, output_dir=str(out), model="bert_tiny",
                  vocab_file=resources.uncased_vocab_path(), max_train_examples=8,
                  save_model=save_model)
  return run_finetuning(get_task_config(task, **{**TINY, **overrides}), run)


@pytest.fixture(scope="module")
def mrpc(tmp_path_factory):
  """(data_dir, fine-tuned dir) of a tiny feature-based MRPC run on files in the official layout
  (feature-based, so that its metrics.json name is checked too: one training run for the file)."""
  root = tmp_path_factory.mktemp("mrpc")
  data = str(root / "MRPC")
  header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
  for split in ("train", "dev"):
    _tsv(os.path.join(data, f"{split}.tsv"), header, MRPC_TRAIN)
  _tsv(os.path.join(data, "test.tsv"), ["index"] + header[1:], MRPC_TEST)
  _finetune("glue/mrpc", root / "run", data_dir=data, approach="feature_based",
            feature_layers=(-1,), lstm_units=4, max_seq_length=32, eval_batch_size=1)
  return data, str(root / "run")


# --- One rule for an empty --data_dir -----------------------------------------------------------

def test_empty_data_dir_never_reads_the_current_directory(tmp_path, monkeypatch):
  """Before: --data_dir='' read ./train.tsv and ./dev.tsv of whatever directory the run was in."""
  header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
  for split in ("train", "dev"):
    _tsv(str(tmp_path / f"{split}.tsv"), header, MRPC_TRAIN)
  monkeypatch.chdir(tmp_path)
  with pytest.raises(UserError, match=r"--data_dir is required for glue/mrpc: it has no embedded "
                                      r"data"):
    _finetune("glue/mrpc", tmp_path / "out")
  assert not os.path.exists(tmp_path / "out")


def test_the_resolved_config_records_the_embedded_folder(tmp_path, monkeypatch):
  """run_finetuning resolves '' once, before any data is read: config.json records the folder."""
  seen = []
  monkeypatch.setattr(finetuning, "_train_and_write", lambda config, run, *rest: seen.append(run))
  _finetune("lee_similarity", tmp_path / "out")
  assert [run.data_dir for run in seen] == [os.path.dirname(resources.lee_documents_path())]


def test_only_the_tasks_help_names_have_embedded_data():
  """--help says '' means the embedded data of polarity and lee_similarity, else an error."""
  config = get_task_config("polarity")
  embedded = {name for name in task_names() if not name.startswith("gpt/")
              and get_task(config.replace(task=name)).embedded_data_dir() is not None}
  assert embedded == {"polarity", "lee_similarity"}
  result = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "run_finetuning.py"),
                           "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT))
  help_text = " ".join(result.stdout.split())
  assert "'' = the embedded data of polarity and lee_similarity (required for every other " \
         "task)" in help_text, help_text[-3000:]


# --- Evaluate-only and predict-only runs ----------------------------------------------------------

def test_evaluate_only_reproduces_the_runs_dev_metrics(mrpc, tmp_path):
  data, run = mrpc
  trained = json.load(open(os.path.join(run, "metrics.json"), encoding="utf-8"))
  results = finetuned_model.run_evaluation(run, str(tmp_path / "eval"), data_dir=data)
  assert results["dev"] == pytest.approx(trained["dev"])
  assert results["task"] == "glue/mrpc_feature_based" and results["mode"] == "evaluate"
  assert results["batch_lengths"] == [16, 24, 32]
  assert sorted(os.listdir(tmp_path / "eval")) == ["config.json", "metrics.json",
                                                   "predictions_dev.json"]
  config = json.load(open(tmp_path / "eval" / "config.json", encoding="utf-8"))
  assert config["finetuned_dir"] == run and config["splits"] == ["dev"]


def test_predict_only_writes_the_glue_server_file_as_fixed_padding_does(mrpc, tmp_path):
  data, run = mrpc
  written = finetuned_model.run_prediction(run, str(tmp_path / "pred"), data_dir=data)
  assert written == ["MRPC.tsv", "config.json", "predictions_test.json"]
  with open(tmp_path / "pred" / "MRPC.tsv", encoding="utf-8") as f:
    rows = list(csv.reader(f, delimiter="\t"))
  assert rows[0] == ["index", "prediction"]
  assert [r[0] for r in rows[1:]] == ["0", "7"] and {r[1] for r in rows[1:]} <= {"0", "1"}
  read = lambda out, name: json.load(open(tmp_path / out / name, encoding="utf-8"))
  bucketed = read("pred", "predictions_test.json")
  assert [p["prediction"] for p in bucketed] == [r[1] for r in rows[1:]]
  # Fixed padding and buckets of the user's choice: the same file, the same predictions in the
  # same order.
  finetuned_model.run_prediction(run, str(tmp_path / "fixed"), data_dir=data,
                                 length_buckets="fixed")
  finetuned_model.run_prediction(run, str(tmp_path / "chosen"), data_dir=data,
                                 length_buckets="20")
  assert read("pred", "config.json")["batch_lengths"] == [16, 24, 32]
  assert read("fixed", "config.json")["batch_lengths"] == [32]
  assert read("chosen", "config.json")["batch_lengths"] == [20, 32]
  tsv = lambda out: (tmp_path / out / "MRPC.tsv").read_text(encoding="utf-8")
  assert tsv("fixed") == tsv("pred") == tsv("chosen")
  fixed = read("fixed", "predictions_test.json")
  assert [p["guid"] for p in bucketed] == [p["guid"] for p in fixed]
  for b, f in zip(bucketed, fixed):
    assert b["probabilities"] == pytest.approx(f["probabilities"], abs=1e-5)
  assert fixed[0]["probabilities"] != pytest.approx(fixed[1]["probabilities"], abs=1e-5)


def test_evaluate_refuses_unlabeled_and_the_runs_own_directory(mrpc, tmp_path):
  data, run = mrpc
  with pytest.raises(UserError, match=r"glue/mrpc test: the examples have no labels.*"
                                      r"--mode=predict"):
    finetuned_model.run_evaluation(run, str(tmp_path / "eval"), data_dir=data, splits=["test"])
  with pytest.raises(UserError, match=r"is the fine-tuned run's own directory"):
    finetuned_model.run_evaluation(run, run, data_dir=data)
  with pytest.raises(UserError, match=r"no model.keras; expected a run_finetuning output"):
    finetuned_model.run_evaluation(data, str(tmp_path / "eval"), data_dir=data)
  assert not os.path.exists(tmp_path / "eval")


@pytest.mark.slow
def test_the_script_predicts_without_training(mrpc, tmp_path):
  data, run = mrpc
  result = B.run_script("run_finetuning", "--mode=predict", f"--finetuned_dir={run}",
                        f"--data_dir={data}", f"--output_dir={tmp_path / 'pred'}",
                        "--length_buckets=fixed")
  assert result.returncode == 0, result.stderr[-2000:]
  assert (tmp_path / "pred" / "MRPC.tsv").is_file()
  config = json.load(open(tmp_path / "pred" / "config.json", encoding="utf-8"))
  assert config["batch_lengths"] == [32]  # the flag reaches predict mode
  result = B.run_script("run_finetuning", "--mode=evaluate", f"--finetuned_dir={run}",
                        f"--data_dir={data}", f"--output_dir={tmp_path / 'eval'}",
                        "--learning_rate=1e-3")
  B.user_error_line(result, "--learning_rate: training settings")
  assert not (tmp_path / "eval").exists()


def test_evaluator_component_accepts_a_finetuning_output_directory(mrpc, tmp_path):
  """Before: a run_finetuning directory has no artifact.json and was refused as input."""
  from components.evaluator.spec import EvaluatorSpec
  from components.evaluator.task_evaluation import evaluate_task_model
  data, run = mrpc
  model = EvaluatorSpec.INPUTS["model"].type.load(run)  # what the component's CLI does
  assert model.properties["task"] == "glue/mrpc" and model.producer == "run_finetuning"
  metrics = evaluate_task_model(model, "dev", data, str(tmp_path), log=lambda _: None)
  trained = json.load(open(os.path.join(run, "metrics.json"), encoding="utf-8"))
  assert metrics == pytest.approx(trained["dev"])
  assert os.listdir(tmp_path) == ["predictions_dev.json"]
  with pytest.raises(UserError, match="no artifact metadata"):
    EvaluatorSpec.INPUTS["model"].type.load(data)  # neither an artifact nor a fine-tuned run


# Each GLUE task's official test.tsv header, and the file the GLUE server expects for it.
GLUE_TEST = {
    "glue/cola": (["index", "sentence"], {"test": "CoLA"}),
    "glue/sst2": (["index", "sentence"], {"test": "SST-2"}),
    "glue/mrpc": (["index", "#1 ID", "#2 ID", "#1 String", "#2 String"], {"test": "MRPC"}),
    "glue/stsb": (["index", "genre", "filename", "year", "old_index", "source1", "source2",
                   "sentence1", "sentence2"], {"test": "STS-B"}),
    "glue/qqp": (["id", "question1", "question2"], {"test": "QQP"}),
    "glue/mnli": (["index", "promptID", "pairID", "genre", "sentence1_binary_parse",
                   "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1",
                   "sentence2"], {"test_matched": "MNLI-m", "test_mismatched": "MNLI-mm"}),
    "glue/qnli": (["index", "question", "sentence"], {"test": "QNLI"}),
    "glue/rte": (["index", "sentence1", "sentence2"], {"test": "RTE"}),
    "glue/wnli": (["index", "sentence1", "sentence2"], {"test": "WNLI"}),
}


@pytest.mark.parametrize("name", sorted(GLUE_TEST))
def test_glue_test_files_and_submissions(tmp_path, name):
  header, files = GLUE_TEST[name]
  task = get_task(get_task_config(name))
  assert task.default_predict_splits(str(tmp_path)) == tuple(files)  # MNLI: no AX file here
  text_columns = [i for i, c in enumerate(header) if c in (
      "sentence", "#1 String", "#2 String", "sentence1", "sentence2", "question1", "question2",
      "question")]
  for split, submission in files.items():
    rows = []
    for index in ("3", "10"):
      row = [f"cell{i}" for i in range(len(header))]
      row[0] = index
      for i in text_columns:
        row[i] = f"text {header[i]} {index}"
      rows.append(row)
    _tsv(str(tmp_path / f"{split}.tsv"), header, rows)
    examples = task.read_examples(str(tmp_path), split)
    assert [e.guid for e in examples] == ["3", "10"]
    texts = [[f"text {header[c]} {i}" for i in ("3", "10")] for c in text_columns]
    assert [e.text_a for e in examples] == texts[0]
    assert [e.text_b for e in examples] == (texts[1] if task.is_pair else [None, None])
    predicted = [2.5, 4.0] if task.is_regression else task.label_names[:2]
    (path,) = task.write_submission(examples, [{"prediction": p} for p in predicted], split,
                                    str(tmp_path))
    assert os.path.basename(path) == f"{submission}.tsv"
    lines = open(path, encoding="utf-8").read().splitlines()
    values = ["2.500", "4.000"] if task.is_regression else predicted
    assert lines == ["index\tprediction", f"3\t{values[0]}", f"10\t{values[1]}"]
    with open(tmp_path / f"{split}.tsv", "a", encoding="utf-8") as f:
      f.write("\t".join(rows[0] + ["stray"]) + "\n")
    with pytest.raises(UserError, match=rf"{split}\.tsv:4: {len(header) + 1} tab-separated "
                                        rf"columns; expected {len(header)}"):
      task.read_examples(str(tmp_path), split)


@pytest.mark.parametrize("name", sorted(GLUE_TEST))
def test_a_labelled_file_as_the_test_file_is_refused(tmp_path, name):
  """Before: a dev.tsv (or MSR's raw MRPC test file, header Quality) given as test.tsv was read
  as the test layout: the submission's index column held its labels (or ids), exit 0."""
  from .test_glue import write_glue  # pylint: disable=import-outside-toplevel
  task = get_task(get_task_config(name))
  data = write_glue(str(tmp_path), name)  # train.tsv in the official labelled layout
  for split in GLUE_TEST[name][1]:
    shutil.copyfile(os.path.join(data, "train.tsv"), os.path.join(data, f"{split}.tsv"))
    with pytest.raises(UserError, match=rf"{split}\.tsv:1: header .* is not the unlabeled GLUE "
                                        rf"{name} test layout"):
      task.read_examples(data, split)


def test_predict_on_a_labelled_test_file_writes_nothing(mrpc, tmp_path):
  data, run = mrpc
  labelled = tmp_path / "MRPC"
  labelled.mkdir()
  with open(os.path.join(data, "dev.tsv"), encoding="utf-8") as f:
    (labelled / "test.tsv").write_text(f.read(), encoding="utf-8")
  with pytest.raises(UserError, match=r"test\.tsv:1: header 'Quality\\t#1 ID"):
    finetuned_model.run_prediction(run, str(tmp_path / "pred"), data_dir=str(labelled))
  assert not os.path.exists(tmp_path / "pred")


def test_mnli_predicts_the_ax_diagnostic_set_when_present(tmp_path):
  """GLUE submissions include AX.tsv (MNLI's model on the diagnostic set): predicted by default
  when glue_data/diagnostic/diagnostic.tsv (the download script's place) or MNLI/AX.tsv exists."""
  task = get_task(get_task_config("glue/mnli"))
  mnli = tmp_path / "glue_data" / "MNLI"
  mnli.mkdir(parents=True)
  assert task.default_predict_splits(str(mnli)) == ("test_matched", "test_mismatched")
  _tsv(str(tmp_path / "glue_data" / "diagnostic" / "diagnostic.tsv"),
       ["index", "sentence1", "sentence2"], [["0", "The cat sat.", "A cat sat."],
                                             ["5", "It rains.", "It is dry."]])
  assert task.default_predict_splits(str(mnli)) == ("test_matched", "test_mismatched", "ax")
  examples = task.read_examples(str(mnli), "ax")
  assert [(e.guid, e.text_a, e.text_b) for e in examples] == [
      ("0", "The cat sat.", "A cat sat."), ("5", "It rains.", "It is dry.")]
  (path,) = task.write_submission(examples, [{"prediction": "entailment"},
                                             {"prediction": "contradiction"}], "ax", str(tmp_path))
  assert os.path.basename(path) == "AX.tsv"
  assert open(path, encoding="utf-8").read().splitlines() == [
      "index\tprediction", "0\tentailment", "5\tcontradiction"]
  _tsv(str(mnli / "AX.tsv"), ["index", "sentence1", "sentence2"], [["9", "A.", "B."]])
  assert [e.guid for e in task.read_examples(str(mnli), "ax")] == ["9"]  # the folder's own first


def test_squad_submission_and_prediction_files(tmp_path):
  task = get_task(get_task_config("squad_v2"))
  predictions = {"predictions": {"a1": "Paris", "a2": ""}, "nbest": {"a1": [], "a2": []},
                 "null_odds": {"a1": -3.0, "a2": 2.0}, "best_non_null": {"a1": "Paris", "a2": "x"}}
  written = task.write_submission([], predictions, "dev", str(tmp_path))
  assert [os.path.basename(p) for p in written] == ["predictions.json", "null_odds.json"]
  assert json.load(open(written[0])) == {"a1": "Paris", "a2": ""}
  assert json.load(open(written[1])) == {"a1": -3.0, "a2": 2.0}
  path = task.write_predictions(predictions, str(tmp_path / "predictions_dev"))
  assert os.path.basename(path) == "predictions_dev.json"
  assert json.load(open(path)) == {"a1": "Paris", "a2": ""}
  assert sorted(n for n in os.listdir(tmp_path) if n.startswith("predictions_")) == [
      "predictions_dev.best_non_null.json", "predictions_dev.json", "predictions_dev.nbest.json",
      "predictions_dev.null_odds.json"]
  assert task.predict_splits == ("dev",)


def test_squad_questions_to_predict_need_no_answers(tmp_path):
  data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [
      {"context": "Paris is big.", "qas": [{"id": "p1", "question": "What is big?"}]}]}]}
  data_dir = fx.write_json(tmp_path, "dev-v1.1.json", data)
  task = get_task(get_task_config("squad_v1"))
  (example,) = task.read_examples(data_dir, "dev")
  assert example.answers == [] and not task.has_labels([example])


# --- Names ---------------------------------------------------------------------------------------

def test_feature_based_metrics_name_the_feature_based_task(mrpc):
  """Before: "task": "glue/mrpc" (the registered task) for a feature-based run."""
  _, run = mrpc
  metrics = json.load(open(os.path.join(run, "metrics.json"), encoding="utf-8"))
  assert metrics["task"] == "glue/mrpc_feature_based"
  assert get_task(get_task_config("conll2003_feature_based")).run_name() == \
      "conll2003_feature_based"
  info = json.load(open(os.path.join(run, "task_info.json"), encoding="utf-8"))
  assert info["task"] == "glue/mrpc"  # what the exporter serves


def test_predict_script_writes_keys_in_sorted_order(tmp_path):
  (tmp_path / "saved_model.pb").write_bytes(b"")  # the script checks it is there, then the stand-in
  driver = B.write(str(tmp_path / "driver.py"), f"""
import runpy, sys, types
# A stand-in predictor module (the real one imports TensorFlow): only the output is checked.
predictor = types.ModuleType("bert_keras.export.saved_model_predictor")
sys.modules[predictor.__name__] = predictor
predictor.check_input_types = lambda records, where: None
predictor.load = lambda path: None
predictor.predict = lambda *args, **kwargs: [{{"probabilities": [0.2, 0.8], "label_id": 1,
                                               "label": "pos"}},
                                              {{"label": "neg", "probabilities": [0.9, 0.1],
                                                "label_id": 0}}]
sys.argv = ["predict.py", "--saved_model={tmp_path}", "--text_a=good"]
runpy.run_path({os.path.join(B.SCRIPTS, "predict.py")!r}, run_name="__main__")
""")
  result = subprocess.run([sys.executable, driver], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=ROOT),
                          timeout=240)
  assert result.returncode == 0, result.stderr[-2000:]
  lines = result.stdout.splitlines()
  assert lines == ['{"label": "pos", "label_id": 1, "probabilities": [0.2, 0.8]}',
                   '{"label": "neg", "label_id": 0, "probabilities": [0.9, 0.1]}']


def test_a_saved_fine_tuned_directory_evaluates(tmp_path):
  """A run_finetuning directory as 0.1.0 writes it (tests/compat) is read as is."""
  run = os.path.join(ROOT, "tests", "compat", "fixtures", "classifier_finetune_dir")
  results = finetuned_model.run_evaluation(run, str(tmp_path / "eval"))
  assert results["task"] == "polarity" and results["dev"]["examples"] == 40
  assert 0.0 <= results["dev"]["accuracy"] <= 100.0
