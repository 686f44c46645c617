"""run_finetuning end to end on tiny models: training, dev metrics, predictions, export artifacts."""

import json
import os

import numpy as np
import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.keras_classes import load_model
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.tasks import finetuning
from bert_keras.tasks.finetuning import RunConfig, run_finetuning
from bert_keras.models.heads.bert_feature_tagger import BertFeatureTagger
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.registry import get_task
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import ModelConfig, get_model_config
from bert_keras.configs.finetuning import FinetuningConfig
from bert_keras.configs.tasks import get_task_config
from tests.tensorboard_events import scalar_events
from . import task_fixtures as fx

TINY = dict(max_seq_length=32, train_batch_size=8, num_epochs=1.0, eval_batch_size=16,
            learning_rate=1e-3)


def _run(task, tmp_path, data_dir="", max_train_examples=0, save_model=True, **overrides):
  config = get_task_config(task, **{**TINY, **overrides})
  run = RunConfig(data_dir=data_dir, output_dir=os.path.join(str(tmp_path), "out"),
                  model="bert_tiny", vocab_file=resources.uncased_vocab_path(),
                  max_train_examples=max_train_examples, save_model=save_model)
  return run_finetuning(config, run), run.output_dir


def test_polarity_end_to_end_writes_export_artifacts(tmp_path, capsys):
  results, out = _run("polarity", tmp_path, max_train_examples=32)
  assert set(results["dev"]) >= {"accuracy", "f1", "examples"}
  assert results["dev"]["examples"] == 40 and results["train_examples"] == 32
  written = sorted(os.listdir(out))
  assert written == ["config.json", "metrics.json", "model.keras", "predictions_dev.json",
                     "task_info.json", "tensorboard", "vocab.txt"]
  # Progress: the step counter over the run, and one for the evaluation's batches.
  err = capsys.readouterr().err
  assert "train step 4/4 [====================] 100%" in err, err[-2000:]
  assert "evaluate dev step 3/3 [====================] 100%" in err, err[-2000:]
  # TensorBoard events, as pretraining writes them: train loss and rate per epoch, dev metrics.
  events = scalar_events(os.path.join(out, "tensorboard"))
  assert sorted(events) == ["dev/accuracy", "dev/f1", "train/learning_rate", "train/loss"]
  assert list(events["train/loss"]) == [4]
  assert events["train/loss"][4] == pytest.approx(results["final_train_loss"], rel=1e-6)
  assert events["dev/accuracy"] == {4: pytest.approx(results["dev"]["accuracy"])}
  info = json.load(open(os.path.join(out, "task_info.json")))
  assert info["label_names"] == ["neg", "pos"] and info["max_seq_length"] == 32
  config = json.load(open(os.path.join(out, "config.json")))
  assert config["task"]["train_batch_size"] == 8 and config["encoder"]["init"] == "random"
  # The run's config.json is a --config_file of the same run (scripts/run_finetuning.py).
  loaded = FinetuningConfig.from_file(os.path.join(out, "config.json"))
  assert loaded.task.to_dict() == config["task"] and loaded.run.to_dict() == config["run"]
  predictions = json.load(open(os.path.join(out, "predictions_dev.json")))
  assert len(predictions) == 40
  accuracy = np.mean([p["prediction"] == e for p, e in zip(
      predictions, ["neg"] * 20 + ["pos"] * 20)])
  assert 100 * accuracy == pytest.approx(results["dev"]["accuracy"])
  # model.keras is the trained model: on the dev set it gives the run's own predictions and metrics.
  task = get_task(get_task_config("polarity", **TINY))
  examples = task.read_examples("", "dev")
  tokenizer = BertTokenizer(vocab_path=os.path.join(out, "vocab.txt"),
                            lower_case=info["lower_case"])
  features = task.make_features(examples, tokenizer, training=False)
  model = load_model(os.path.join(out, "model.keras"))
  reloaded = task.postprocess(examples, features, model.predict(features.inputs, verbose=0))
  assert [p["prediction"] for p in reloaded] == [p["prediction"] for p in predictions]
  np.testing.assert_allclose([p["probabilities"] for p in reloaded],
                             [p["probabilities"] for p in predictions], atol=1e-5)
  metrics = json.load(open(os.path.join(out, "metrics.json")))
  assert {**task.evaluate(examples, reloaded), "examples": 40} == pytest.approx(metrics["dev"])


def test_rerun_into_the_same_directory_leaves_no_stale_model_or_predictions(tmp_path):
  """A --save_model=false rerun at another length must not leave the first run's model.keras
  beside its own task_info.json: export would serve a length-32 model as a length-48 one."""
  from bert_keras.export.export_config import ExportConfig, run_export
  _, out = _run("polarity", tmp_path, max_train_examples=16)
  assert os.path.isfile(os.path.join(out, "model.keras"))
  # What a run of another task (other splits, other formats) would have left beside it.
  for name in ("predictions_dev_mismatched.json", "predictions_test.txt"):
    open(os.path.join(out, name), "w").close()
  _, again = _run("polarity", tmp_path, max_train_examples=16, save_model=False, max_seq_length=48)
  assert again == out and not os.path.exists(os.path.join(out, "model.keras"))
  assert sorted(n for n in os.listdir(out) if n.startswith("predictions_")) == ["predictions_dev.json"]
  assert json.load(open(os.path.join(out, "task_info.json")))["max_seq_length"] == 48
  with pytest.raises(UserError, match="no model.keras beside its task_info.json.*save_model"):
    run_export(ExportConfig(output_dir=str(tmp_path / "export"), finetuned_dir=out))
  assert not os.path.exists(tmp_path / "export")


def test_missing_init_is_a_user_error(tmp_path):
  config = get_task_config("polarity")
  with pytest.raises(UserError, match="--init_checkpoint"):
    run_finetuning(config, RunConfig(output_dir=str(tmp_path)))


def test_config_only_model_configs_are_told_apart_by_one_rule(tmp_path):
  """A preset or ModelConfig JSON (no weights, no vocab.txt) is recognised alike by the random-init
  build, the sequence-length check and the vocabulary check; a JSON of another kind is a model
  config to none of them."""
  spec = str(tmp_path / "tiny.json")
  with open(spec, "w", encoding="utf-8") as f:
    f.write(get_model_config("bert_tiny", num_layers=1).to_json())
  for name, expected in (("bert_tiny", get_model_config("bert_tiny")),
                         (spec, ModelConfig.from_file(spec))):
    assert finetuning.resolve_model_config(name) == (expected, None, None)
    run = RunConfig(model=name)
    source = finetuning.resolve_encoder_source(run)
    assert (source.config, source.config_only, source.checkpoint) == (expected, True, None)
    with pytest.raises(UserError, match="--vocab_file is needed"):
      finetuning.ModelFamily().resolve(run, get_task_config("polarity", max_seq_length=16))
  other = str(tmp_path / "other.json")
  with open(other, "w", encoding="utf-8") as f:
    json.dump({"hidden_size": 8, "note": "not a model config: no vocab_size"}, f)
  for check in (lambda: finetuning.resolve_model_config(other),
                lambda: finetuning.resolve_encoder_source(RunConfig(model=other))):
    with pytest.raises(UserError, match="other.json: unknown checkpoint file"):
      check()


def test_an_init_checkpoint_directory_builds_its_saved_encoder(tmp_path):
  """--init_checkpoint naming a directory with an encoder.keras: the checks pass and the task's
  encoder starts from its weights (its format is detected once: bench/check_graphs.py)."""
  directory = str(tmp_path / "ckpt")
  os.makedirs(directory)
  encoder = BertEncoder.from_model_config(get_model_config("bert_tiny", num_layers=1))
  encoder.save(os.path.join(directory, "encoder.keras"))
  task_config = get_task_config("polarity", max_seq_length=16)
  source = finetuning.ModelFamily().resolve(RunConfig(init_checkpoint=directory), task_config)
  built, described, _, _ = finetuning.build_encoder(source, task_config)
  assert described["format"] == "keras" and built.model_config.num_layers == 1
  assert len(built.get_weights()) == len(encoder.get_weights())
  for got, saved in zip(built.get_weights(), encoder.get_weights()):
    np.testing.assert_array_equal(got, saved)


@pytest.mark.slow
def test_squad_v2_end_to_end(tmp_path):
  data = str(tmp_path)
  for split in ("train", "dev"):
    fx.write_json(tmp_path, f"{split}-v2.0.json", fx.SQUAD_V2)
  results, out = _run("squad_v2", tmp_path, data_dir=data, max_seq_length=32, max_query_length=8)
  assert {"exact", "f1", "best_f1", "best_f1_thresh", "HasAns_f1", "NoAns_f1"} <= set(results["dev"])
  info = json.load(open(os.path.join(out, "task_info.json")))
  assert info["null_score_diff_threshold"] == results["dev"]["best_f1_thresh"]
  assert os.path.exists(os.path.join(out, "predictions_dev.null_odds.json"))
  assert set(json.load(open(os.path.join(out, "predictions_dev.json")))) == {"a1", "a2"}
  # Predict-only with the fine-tuned directory: the official files SQuAD v2.0 submissions use.
  from bert_keras.tasks.finetuned_model import run_prediction
  written = run_prediction(out, str(tmp_path / "submission"), data_dir=data)
  assert written == ["config.json", "null_odds.json", "predictions.json",
                     "predictions_dev.best_non_null.json", "predictions_dev.json",
                     "predictions_dev.nbest.json", "predictions_dev.null_odds.json"]
  submitted = json.load(open(tmp_path / "submission" / "predictions.json"))
  assert submitted == json.load(open(os.path.join(out, "predictions_dev.json")))
  assert set(json.load(open(tmp_path / "submission" / "null_odds.json"))) == {"a1", "a2"}


@pytest.mark.slow
def test_swag_end_to_end(tmp_path):
  fx.write_swag(tmp_path / "train.csv")
  fx.write_swag(tmp_path / "val.csv")
  results, out = _run("swag", tmp_path, data_dir=str(tmp_path), save_model=False)
  assert results["train_examples"] == 2 and results["train_steps"] == 1
  assert results["dev"]["examples"] == 2
  predictions = json.load(open(os.path.join(out, "predictions_dev.json")))
  assert [(p["guid"], p["video-id"]) for p in predictions] == [("0", "lsmdc3001"),
                                                               ("1", "anetv_1")]
  # Each prediction is the best-scored of the four endings, scored against the label column.
  assert [len(p["logits"]) for p in predictions] == [4, 4]
  assert [p["prediction"] for p in predictions] == [int(np.argmax(p["logits"]))
                                                     for p in predictions]
  gold = [int(row[-1]) for row in fx.SWAG_ROWS]


  assert json.load(open(os.path.join(out, "task_info.json")))["num_choices"] == 4


def _record_initial_encoder(monkeypatch) -> list:
  """Has run_finetuning's build_encoder append the encoder's weights as built, before training."""
  initial, build = [], finetuning.build_encoder

  def recording_build(*args, **kwargs):
    built = build(*args, **kwargs)
    initial.extend(built[0].get_weights())
    return built

  monkeypatch.setattr(finetuning, "build_encoder", recording_build)
  return initial


def _encoder_weights_changed(out: str, head: type, initial: list) -> list:
  """Loads the run's model.keras and checks its head class; names the encoder weights that training
  moved."""
  model = load_model(os.path.join(out, "model.keras"))
  assert type(model) is head  # pylint: disable=unidiomatic-typecheck
  weights = model.encoder.weights
  assert len(weights) == len(initial)
  return [w.path for w, before in zip(weights, initial) if not np.array_equal(w.numpy(), before)]


@pytest.mark.slow
@pytest.mark.parametrize("approach", ["fine_tuning", "feature_based"])
def test_conll_fine_tuning_and_feature_based(tmp_path, monkeypatch, approach):
  """Fine-tuning trains the encoder under a token classifier; the feature-based approach (5.3)
  trains only a BiLSTM tagger over the frozen encoder's layers."""
  fx.write_conll(tmp_path)
  initial = _record_initial_encoder(monkeypatch)
  features = dict(feature_layers=(-2, -1), lstm_units=16) if approach == "feature_based" else {}
  results, out = _run("conll2003", tmp_path, data_dir=str(tmp_path), approach=approach,
                      num_epochs=3.0, train_batch_size=4, **features)
  assert {"precision", "recall", "f1"} <= set(results["dev"])
  assert os.path.exists(os.path.join(out, "predictions_dev.conlleval.txt"))
  assert os.path.exists(os.path.join(out, "predictions_dev.json"))
  metrics = json.load(open(os.path.join(out, "metrics.json")))
  assert metrics["task"] == ("conll2003_feature_based" if approach == "feature_based"
                             else "conll2003")
  assert metrics["data"] == {"tagging_scheme": "iob1"}
  info = json.load(open(os.path.join(out, "task_info.json")))
  assert info["approach"] == approach and info["label_names"][0] == "O"
  feature_based = approach == "feature_based"
  changed = _encoder_weights_changed(
      out, BertFeatureTagger if feature_based else BertTokenClassifier, initial)
  assert (changed == []) if feature_based else len(changed) > len(initial) // 2, changed
