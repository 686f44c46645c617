"""GPT-1 tasks in the shared task registry: names, layouts, features, heads, metrics, export."""

import json

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.gpt.gpt_export import export_gpt_finetuned
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_task import GPTTask
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.tasks.polarity import PolarityTask
from bert_keras.tasks.registry import get_task, task_names
from bert_keras.configs.finetuning import RunConfig
from bert_keras.configs.model import ConfigError, get_model_config
from bert_keras.configs.tasks import TaskConfig
from bert_keras.tasks.finetuning import run_finetuning
from tests.tasks.task_fixtures import write_swag

SEQ = 24


@pytest.fixture(scope="module")
def tokenizer():
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    texts = f.read().splitlines()[:200]
  return GPTTokenizer(model_proto=train_bpe_model(texts, vocab_size=300))


def _task(name, **overrides):
  return get_task(TaskConfig(task=name, max_seq_length=SEQ, **overrides))


def _decoder(tokenizer):
  return GPTDecoder.from_model_config(get_model_config(
      "gpt_nano", vocab_size=tokenizer.vocab_size, max_position_embeddings=SEQ, dropout_rate=0.0,
      attention_dropout_rate=0.0))


def test_registry_resolves_gpt_and_bert_tasks_side_by_side():
  names = set(task_names())
  assert {"polarity", "lee_similarity", "swag", "glue/rte"} <= names
  layouts = {"gpt/polarity": "classification", "gpt/glue/rte": "entailment",
             "gpt/lee_similarity": "similarity", "gpt/glue/mrpc": "similarity",
             "gpt/swag": "multiple_choice"}
  for name, layout in layouts.items():
    task = _task(name)
    assert isinstance(task, GPTTask) and task.name == name and task.layout == layout
  assert type(_task("polarity")) is PolarityTask  # BERT's task is unchanged
  with pytest.raises(UserError, match="unknown task 'gpt/squad_v9'"):
    _task("gpt/squad_v9")


def test_gpt_presets_are_model_presets():
  assert get_model_config("gpt_tiny", vocab_size=500).vocab_size == 500
  assert get_model_config("bert_tiny").attention == "bidirectional"
  with pytest.raises(ConfigError, match="'gpt1'.*'gpt_tiny'"):
    get_model_config("gpt9")


def test_layout_shapes_and_labels(tokenizer, tmp_path):
  polarity = _task("gpt/polarity")
  examples = polarity.read_examples("", "dev")
  features = polarity.make_features(examples, tokenizer, training=False)
  ids = features.inputs["input_word_ids"]
  assert ids.shape == (len(examples), SEQ) and (ids[:, 0] == tokenizer.start_id).all()
  last = features.inputs["input_mask"].sum(1) - 1
  assert (ids[np.arange(len(ids)), last] == tokenizer.extract_id).all()
  assert set(features.labels["logits"]) == {0, 1}

  lee = _task("gpt/lee_similarity")
  pair = lee.make_features(lee.read_examples("", "dev")[:5], tokenizer, training=False)
  assert pair.inputs["input_word_ids"].shape == (5, 2, SEQ)
  assert pair.labels["logits"].dtype == np.float32 and lee.num_outputs == 1

  write_swag(tmp_path / "val.csv")
  swag = _task("gpt/swag")
  choices = swag.make_features(swag.read_examples(str(tmp_path), "dev"), tokenizer, training=False)
  assert choices.inputs["input_word_ids"].shape == (2, 4, SEQ)
  assert choices.labels["logits"].tolist() == [0, 2] and swag.num_outputs == 1


def test_multiple_choice_model_metrics_and_export(tokenizer, tmp_path):
  """The registry task builds the head, scores with the BERT task's official metric, and the
  export path (task_info.json -> registry -> layout) serves raw strings with the same logits."""
  write_swag(tmp_path / "val.csv")
  task = _task("gpt/swag", dropout_rate=0.0)
  examples = task.read_examples(str(tmp_path), "dev")
  features = task.make_features(examples, tokenizer, training=False)
  model = task.build_model(_decoder(tokenizer))
  logits = np.asarray(model(features.inputs)["logits"])
  assert logits.shape == (2, 4)
  predictions = task.postprocess(examples, features, {"logits": logits})
  accuracy = task.evaluate(examples, predictions)["accuracy"]
  assert accuracy == 100 * np.mean(logits.argmax(-1) == [0, 2])

  run_dir = tmp_path / "run"
  run_dir.mkdir()
  model.save(str(run_dir / "model.keras"))
  tokenizer.save_model(str(run_dir / "bpe.model"))
  (run_dir / "task_info.json").write_text(json.dumps(task.task_info()))
  info = export_gpt_finetuned(str(run_dir), str(tmp_path / "export"))
  assert (info["task"], info["layout"], info["num_choices"]) == ("gpt/swag", "multiple_choice", 4)
  # The common export path (scripts/export_model.py --finetuned_dir) routes gpt/* tasks here too.
  from bert_keras.export.export_config import ExportConfig, run_export  # pylint: disable=import-outside-toplevel
  result = run_export(ExportConfig(output_dir=str(tmp_path / "export2"), finetuned_dir=str(run_dir)))
  assert (result["kind"], result["task"]) == ("gpt", "gpt/swag")
  served2 = tf.saved_model.load(str(tmp_path / "export2")).signatures["serving_default"]
  served = tf.saved_model.load(str(tmp_path / "export")).signatures["serving_default"]
  endings = [[f"{e.start_ending} {x}".strip() for x in e.endings] for e in examples]
  out = served(context=tf.constant([e.context for e in examples]), endings=tf.constant(endings))
  np.testing.assert_allclose(out["logits"].numpy(), logits, rtol=1e-4, atol=1e-5)
  out2 = served2(context=tf.constant([e.context for e in examples]), endings=tf.constant(endings))
  np.testing.assert_allclose(out2["logits"].numpy(), logits, rtol=1e-4, atol=1e-5)
  # scripts/predict.py's reader knows the GPT kind and its inputs.
  from bert_keras.export import saved_model_predictor as predictor  # pylint: disable=import-outside-toplevel
  records = [{"context": e.context, "endings": ending} for e, ending in zip(examples, endings)]
  rows = predictor.predict(predictor.load(str(tmp_path / "export2")), records)
  np.testing.assert_allclose([r["logits"] for r in rows], logits, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,fields", [("gpt/polarity", ("text",)),
                                         ("gpt/lee_similarity", ("text_a", "text_b"))])
def test_export_model_path_refuses_bert_settings_and_serves_predict(tokenizer, tmp_path, name,
                                                                     fields):
  """export_model --finetuned_dir on a GPT run: BERT-only flags are refused (not ignored), the
  resolved config is written to assets.extra/, and predict reads the export's kind and inputs."""
  from bert_keras.export import saved_model_predictor as predictor  # pylint: disable=import-outside-toplevel
  from bert_keras.export.export_config import ExportConfig, run_export  # pylint: disable=import-outside-toplevel
  task = _task(name, dropout_rate=0.0)
  examples = task.read_examples("", "dev")[:3]
  features = task.make_features(examples, tokenizer, training=False)
  model = task.build_model(_decoder(tokenizer))
  logits = np.asarray(model(features.inputs)["logits"])
  run_dir = tmp_path / "run"
  run_dir.mkdir()
  model.save(str(run_dir / "model.keras"))
  tokenizer.save_model(str(run_dir / "bpe.model"))
  (run_dir / "task_info.json").write_text(json.dumps(task.task_info()))
  out = tmp_path / "export"
  for setting in ({"max_seq_length": 999}, {"head_groups": 5}, {"jit_compile": True},
                  {"doc_stride": 8}, {"vocab_file": "v.txt"}, {"lower_case": True}):
    with pytest.raises(UserError, match=f"{next(iter(setting))} apply to BERT exports only"):
      run_export(ExportConfig(output_dir=str(out), finetuned_dir=str(run_dir), **setting))
    assert not out.exists()
  result = run_export(ExportConfig(output_dir=str(out), finetuned_dir=str(run_dir)))
  assert (result["kind"], result["task"]) == ("gpt", name)
  written = json.loads((out / "assets.extra" / "export_config.json").read_text())
  assert written["finetuned_dir"] == str(run_dir) and written["max_seq_length"] is None
  loaded = predictor.load(str(out))
  assert loaded.kind.numpy().decode() == "gpt_" + task.layout and predictor.INPUTS[
      "gpt_" + task.layout] == fields
  columns = task.texts(examples)
  records = [dict(zip(fields, values)) for values in zip(*columns)]
  rows = predictor.predict(loaded, records, batch_size=2)
  np.testing.assert_allclose(np.reshape([r["logits"] for r in rows], logits.shape), logits,
                             rtol=1e-4, atol=1e-5)
  if len(fields) == 2:  # GPT pair signatures have no optional second text
    with pytest.raises(UserError, match="missing \\['text_b'\\]"):
      predictor.predict(loaded, [{"text_a": "only one"}])


def test_entailment_packs_premise_delimiter_hypothesis(tokenizer, tmp_path):
  rows = ["index\tsentence1\tsentence2\tlabel", "0\tthe cat sat\ta cat sat\tentailment",
          "1\tthe dog ran\tnobody ran\tnot_entailment"]
  (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
  task = _task("gpt/glue/rte")
  features = task.make_features(task.read_examples(str(tmp_path), "train"), tokenizer, True)
  ids = features.inputs["input_word_ids"]
  assert ids.shape == (2, SEQ) and (ids == tokenizer.delimiter_id).sum(1).tolist() == [1, 1]
  assert features.labels["logits"].tolist() == [0, 1]
  assert task.build_model(_decoder(tokenizer)).task_type == "classification"


def test_finetuning_rejects_bert_only_tasks(tmp_path):
  with pytest.raises(UserError, match="unknown task 'gpt/squad_v1'"):
    run_finetuning(TaskConfig(task="gpt/squad_v1"), RunConfig(output_dir=str(tmp_path / "o")))
