"""JSON files from users (SQuAD data, configs, predict's JSON lines) through the one shared reader,
bert_keras/json_io.py: invalid UTF-8, syntax errors, nesting deeper than Python's recursion limit
and values of the wrong JSON type all give one-line UserErrors naming the file and the line or the
JSON path. Also: predict's output stays valid JSON when a score is -inf."""

import json
import math
import os

import numpy as np
import pytest

from bert_keras.json_io import parse_json, read_json_file
from tests.reliability import bad_inputs as B

DEEP = "[" * 100000  # the stdlib parser recurses once per level: RecursionError without the helper


# --- the shared reader ----------------------------------------------------------------------------

def test_json_io_reports_file_line_and_column(tmp_path):
  path = B.write(str(tmp_path / "a.json"), '{\n  "x": 1,\n  "y": 2,,\n}')
  B.raises(lambda: read_json_file(path), f"{path}:3: not valid JSON", "column 10")
  B.raises(lambda: parse_json('{"a": }', "in.jsonl", line=7), "in.jsonl:7: not valid JSON")


def test_json_io_invalid_utf8_names_the_line(tmp_path):
  path = B.write(str(tmp_path / "a.json"), b'{\n"x":\n"\xff"}')
  B.raises(lambda: read_json_file(path), f"{path}:3: not valid UTF-8")


def test_json_io_deep_nesting_is_a_user_error(tmp_path):
  path = B.write(str(tmp_path / "deep.json"), DEEP)
  B.raises(lambda: read_json_file(path), path, "nested too deeply")
  B.raises(lambda: parse_json('{"a": ' * 100000, "x.jsonl", line=4), "x.jsonl:4:",
          "nested too deeply")


def test_json_io_checks_the_top_level_type_and_missing_files(tmp_path):
  path = B.write(str(tmp_path / "list.json"), "[1]")
  B.raises(lambda: read_json_file(path, expected=dict), path, "expected an object", "got an array")
  assert read_json_file(path, expected=list) == [1]
  missing = str(tmp_path / "none.json")
  B.raises(lambda: read_json_file(missing, "model config file"), f"{missing}: no such model config")
  B.raises(lambda: read_json_file(str(tmp_path), "config file"), "is a directory")


# --- SQuAD (open bugs 1, 2 and 3) -----------------------------------------------------------------

def _squad_doc(paragraphs):
  return {"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}


def _qa(**changes):
  qa = {"id": "q1", "question": "how was it?", "answers": [{"text": "good", "answer_start": 13}]}
  qa.update(changes)
  return [{"context": "the film was good", "qas": [qa]}]


SQUAD_CASES = {
    "invalid utf-8": (b'{"data": [\n"\xff"]}', "train-v1.1.json:2: not valid UTF-8"),
    "deep nesting": (DEEP, "train-v1.1.json: JSON nested too deeply"),
    "article not an object": ({"data": [1]}, "data[0]: the article is a number (1); expected an object"),
    "paragraphs not a list": ({"data": [{"paragraphs": 3}]},
                              "data[0]: 'paragraphs' is a number (3); expected an array"),
    "paragraph not an object": (_squad_doc(["text"]),
                                "data[0].paragraphs[0]: the paragraph is a string"),
    "question not an object": (_squad_doc([{"context": "c", "qas": [1]}]),
                               "data[0].paragraphs[0].qas[0]: the question is a number (1); expected an object"),
    "answers not a list": (_squad_doc(_qa(answers=5)),
                           "qas[0]: 'answers' is a number (5); expected an array"),
    "answer not an object": (_squad_doc(_qa(answers=["good"])),
                             "qas[0].answers[0] (id q1): the answer is a string ('good'); expected an object"),
    "answer text not a string": (_squad_doc(_qa(answers=[{"text": 5, "answer_start": 0}])),
                                 "qas[0].answers[0] (id q1): 'text' is a number (5); expected a string"),
    "question text not a string": (_squad_doc(_qa(question=["q"])),
                                   "qas[0]: 'question' is an array (['q']); expected a string"),
    "id not a string": (_squad_doc(_qa(id={"a": 1})), "qas[0]: 'id' is an object"),
    "answer_start true": (_squad_doc(_qa(answers=[{"text": "t", "answer_start": True}])),
                          "answer_start=True is outside"),
}


@pytest.mark.parametrize("case", sorted(SQUAD_CASES))
def test_squad_bad_json_values(tmp_path, case):
  from bert_keras.tasks import squad
  data, needle = SQUAD_CASES[case]
  path = B.write(str(tmp_path / "train-v1.1.json"),
                 data if isinstance(data, (str, bytes)) else json.dumps(data))
  B.raises(lambda: squad.read_squad(path, training=True, version_2=False), path, needle)


def test_squad_valid_file_still_reads(tmp_path):
  from bert_keras.tasks import squad
  path = B.write(str(tmp_path / "dev-v1.1.json"), B.squad_json())
  (example,) = squad.read_squad(path, training=True, version_2=False)
  assert example.orig_answer_text == "good" and example.start_position == 3


# --- configs and predict's JSON lines (open bugs 3 and 11) ---------------------------------------

def test_config_files_nested_too_deeply(tmp_path):
  from bert_keras.configs.model import ModelConfig
  from bert_keras.configs.training import TrainingConfig
  path = B.write(str(tmp_path / "deep.json"), DEEP)
  B.raises(lambda: ModelConfig.from_file(path), path, "nested too deeply")
  B.raises(lambda: TrainingConfig.from_file(path), path, "nested too deeply")


def test_config_files_not_utf8_and_not_objects(tmp_path):
  from bert_keras.configs.model import ModelConfig
  from bert_keras.configs.training import TrainingConfig
  latin = B.write(str(tmp_path / "latin.json"), b'{"model": "caf\xe9"}')
  B.raises(lambda: TrainingConfig.from_file(latin), f"{latin}:1: not valid UTF-8")
  array = B.write(str(tmp_path / "array.json"), "[1, 2]")
  B.raises(lambda: ModelConfig.from_file(array), array, "expected an object", "got an array")


def test_predict_jsonl_missing_utf8_deep(tmp_path):
  from bert_keras.export.saved_model_predictor import read_jsonl
  missing = str(tmp_path / "none.jsonl")
  B.raises(lambda: read_jsonl(missing), f"{missing}: no such JSON-lines input file")
  latin = B.write(str(tmp_path / "latin.jsonl"), b'{"text_a": "ok"}\n{"text_a": "caf\xe9"}\n')
  B.raises(lambda: read_jsonl(latin), f"{latin}:2: not valid UTF-8")
  deep = B.write(str(tmp_path / "deep.jsonl"), '{"text_a": "ok"}\n\n' + DEEP + "\n")
  B.raises(lambda: read_jsonl(deep), f"{deep}:3: JSON nested too deeply")
  ok = B.write(str(tmp_path / "ok.jsonl"), '{"text_a": "a"}\r\n\n{"text_a": "b"}')
  assert read_jsonl(ok) == [(1, {"text_a": "a"}), (3, {"text_a": "b"})]  # 1-based line numbers


def test_predict_inputs_that_are_not_text_and_bad_batch_sizes():
  from bert_keras.export.saved_model_predictor import check_input_types, predict
  good = {"question": "q", "context": "c"}
  B.raises(lambda: predict(_FakeSquadModel(), [good, {"question": 5, "context": "c"}],
                           where=["in.jsonl:1", "in.jsonl:4"]), "in.jsonl:4: question=5 must be a string")
  B.raises(lambda: predict(_FakeSquadModel(), [good, {"question": "q"}]), "record 2: missing ['context']")
  for size in (0, -3):
    B.raises(lambda: predict(_FakeSquadModel(), [good], batch_size=size), f"batch_size={size}")
  B.raises(lambda: check_input_types([{"context": "c", "endings": ["a", 3]}], ["x.jsonl:2"]),
           "x.jsonl:2: endings=['a', 3] must be a non-empty list of strings")
  B.raises(lambda: check_input_types([{"text": None}]), "record 1: text=None must be a string")


class _FakeSquadModel:
  """What predict() uses of an exported SavedModel: `kind` and `serve`, here returning a passage
  without a valid span (score -inf, as the exported span labeler does) next to a normal one."""

  def __init__(self):
    import tensorflow as tf
    self.kind = tf.constant("squad")
    self._tf = tf

  def serve(self, questions, contexts):
    tf = self._tf
    n = int(questions.shape[0])
    return {"answer": tf.constant([b"", b"good"][:n]),
            "score": tf.constant([-np.inf, 3.5][:n], tf.float32),
            "no_answer": tf.constant([True, False][:n]),
            "start_logits": tf.constant([[np.nan, -np.inf, 1.0], [0.0, 1.0, 2.0]][:n], tf.float32)}


def test_predict_output_with_minus_inf_score_is_valid_json():
  from bert_keras.export.saved_model_predictor import predict
  results = predict(_FakeSquadModel(), [{"question": "q", "context": "c"},
                                        {"question": "q", "context": "the film was good"}])
  text = "\n".join(json.dumps(r, allow_nan=False) for r in results)  # raises on NaN / inf
  first, second = [json.loads(line) for line in text.splitlines()]
  assert first["score"] is None and first["no_answer"] is True and first["answer"] == ""
  assert first["start_logits"] == [None, None, 1.0]
  assert math.isclose(second["score"], 3.5) and second["answer"] == "good"


# --- the remaining JSON inputs: task_info.json, component parameters, TF_CONFIG, overrides ----------

def test_task_info_nested_too_deeply_or_not_an_object(tmp_path):
  """An export from a fine-tuned directory whose task_info.json is hand-edited: refused before
  anything is loaded or written."""
  from bert_keras.export.export_config import ExportConfig, run_export  # pylint: disable=import-outside-toplevel
  info = str(tmp_path / "finetuned" / "task_info.json")
  for text, needle in ((DEEP, "nested too deeply"), ("[1]", "expected an object"),
                       ("{}", "max_seq_length")):
    B.write(info, text)
    config = ExportConfig(output_dir=str(tmp_path / "export"), finetuned_dir=os.path.dirname(info))
    B.raises(lambda: run_export(config), info, needle)
    assert not os.path.exists(tmp_path / "export")


def test_component_parameters_file_and_values(tmp_path):
  from bert_keras.orchestration.component_cli import parse_param_value  # pylint: disable=import-outside-toplevel
  assert parse_param_value("3") == 3 and parse_param_value("some/path") == "some/path"
  B.raises(lambda: parse_param_value(DEEP), "nested too deeply")


def test_tf_config_nested_too_deeply(monkeypatch):
  from bert_keras.training.distribute import get_strategy  # pylint: disable=import-outside-toplevel
  monkeypatch.setenv("TF_CONFIG", DEEP)
  B.raises(lambda: get_strategy("multi_worker_mirrored"), "TF_CONFIG", "nested too deeply")
  monkeypatch.setenv("TF_CONFIG", "{not json")
  B.raises(lambda: get_strategy("multi_worker_mirrored"), "TF_CONFIG", "not valid JSON")


def test_model_config_beside_weights_skips_a_deep_json(tmp_path):
  """A hostile extra .json beside the weights is skipped, not a RecursionError."""
  from bert_keras.interop import loader  # pylint: disable=import-outside-toplevel
  B.write(str(tmp_path / "a_deep.json"), DEEP)
  weights = B.write(str(tmp_path / "model.weights.h5"), b"")
  B.raises(lambda: loader.open_checkpoint(weights, read_weights=False), weights, "no model config JSON")


def test_pipeline_metadata_files_nested_too_deeply_or_not_objects(tmp_path):
  """The pipeline's own artifact.json, hand-edited: a UserError naming the file."""
  from bert_keras.orchestration.artifact import Artifact  # pylint: disable=import-outside-toplevel
  artifact_dir = tmp_path / "artifact"
  artifact_dir.mkdir()
  metadata = B.write(str(artifact_dir / "artifact.json"), DEEP)
  B.raises(lambda: Artifact.load(str(artifact_dir)), metadata, "nested too deeply")
  B.write(metadata, "[]")
  B.raises(lambda: Artifact.load(str(artifact_dir)), metadata, "expected an object")
