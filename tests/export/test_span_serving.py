"""SQuAD exports (v1.1 and v2.0, max_answer_length 30 as run_squad.py) on the inputs a new user
tries first: predict.py's own example, a single question, an empty batch."""

import pytest
import tensorflow as tf

from bert_keras.export import saved_model_predictor as predictor
from tests.export import tiny_exports

EXAMPLE = {"question": "Who?", "context": "Ada wrote."}  # scripts/predict.py's --help example


@pytest.fixture(scope="module")
def squad_exports(tmp_path_factory):
  root = tmp_path_factory.mktemp("squad_exports")
  vocab = tiny_exports.tokenizer()
  return {kind: predictor.load(tiny_exports.export(kind, str(root / kind), vocab))
          for kind in ("squad_v1", "squad")}


def test_a_short_question_is_answered_below_max_answer_length(squad_exports):
  """The example packs into the shortest bucket, 16 positions: fewer than max_answer_length."""
  for kind, loaded in squad_exports.items():
    assert int(loaded.max_answer_length.numpy()) > int(loaded.length_buckets.numpy()[0]) == 16
    (row,) = predictor.predict(loaded, [EXAMPLE])
    if row["no_answer"]:  # v2.0 only: its null score won
      assert kind == "squad" and row["answer"] == "" and row["start"] == row["end"] == -1
    else:
      assert row["answer"] and EXAMPLE["context"][row["start"]:row["end"]] == row["answer"]
    assert kind == "squad" or not row["no_answer"], row  # v1.1 always has a span here
    single = loaded.serve(tf.constant(EXAMPLE["question"]), tf.constant(EXAMPLE["context"]))
    assert single["answer"].numpy().decode() == row["answer"], kind


def test_an_empty_batch_gets_empty_answers(squad_exports):
  for kind, loaded in squad_exports.items():
    empty = tf.constant([], tf.string)
    outputs = loaded.serve(empty, empty)
    assert sorted(outputs) == ["answer", "end", "no_answer", "null_score_diff", "score", "start"]
    for name, value in outputs.items():
      assert value.shape == (0,), f"{kind} {name}: {value.shape}"
