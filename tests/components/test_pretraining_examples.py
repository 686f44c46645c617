"""The pretraining_examples component is scripts/create_pretraining_data.py on the ingested corpus:
both go through `pretraining_data_pipeline.create_pretraining_data`, so a corpus that yields no
instance publishes nothing (no shard, no summary.json) from either."""

import json
import os
import shutil

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.orchestration.base_executor import ExecutionContext
from bert_keras.orchestration.standard_artifacts import Corpus, Examples, Vocabulary
from components.pretraining_examples.executor import PretrainingExamplesExecutor

IN_MEMORY = ("--direct_running_mode=in_memory", "--direct_num_workers=1")
PARAMETERS = dict(max_seq_length=32, max_predictions_per_seq=5, masked_lm_prob=0.15,
                  short_seq_prob=0.1, dupe_factor=1, seed=1, num_shards=2)


def _run(tmp_path, documents):
  """Runs the component on `documents` (lists of sentences); returns the Examples artifact."""
  os.makedirs(tmp_path / "corpus")
  os.makedirs(tmp_path / "vocabulary")
  with open(tmp_path / "corpus" / "corpus-0.txt", "w", encoding="utf-8") as f:
    f.write("".join("\n".join(sentences) + "\n\n" for sentences in documents))
  shutil.copyfile(resources.uncased_vocab_path(), tmp_path / "vocabulary" / "vocab.txt")
  examples = Examples(str(tmp_path / "examples"))
  executor = PretrainingExamplesExecutor(ExecutionContext(beam_pipeline_args=IN_MEMORY))
  executor.run({"corpus": Corpus(str(tmp_path / "corpus")),
                "vocabulary": Vocabulary(str(tmp_path / "vocabulary"))},
               {"examples": examples}, PARAMETERS)
  return examples


def test_no_instance_publishes_nothing(tmp_path):
  """One-sentence documents give no sentence pair: the run is refused before any shard or
  summary.json is published (the component once published both, then raised)."""
  with pytest.raises(UserError, match=r"^no pretraining instance") as raised:
    _run(tmp_path, [["A lone sentence."], ["Another lone sentence."]])
  published = os.listdir(tmp_path / "examples") if os.path.isdir(tmp_path / "examples") else []
  assert published == []
  # The script's message: how many documents were read, and how many had enough sentences.
  assert "2 documents read, 0 with at least min_sentences_per_document=2" in str(raised.value)


def test_the_component_publishes_the_scripts_shards_and_summary(tmp_path):
  """The Examples artifact holds what the script writes: num_shards shards, listed with their
  sizes in summary.json, whose instance count the component reports."""
  sentences = [f"Sentence {i} of the document is here." for i in range(6)]
  examples = _run(tmp_path, [sentences, sentences[::-1]])
  with open(tmp_path / "examples" / "summary.json", encoding="utf-8") as f:
    summary = json.load(f)
  assert examples.metrics["instances"] == summary["instances"] > 0
  shards = sorted(entry["name"] for entry in summary["files"])
  assert [name.split(".")[0] for name in shards] == [
      f"pretraining-{i:05d}-of-00002" for i in range(PARAMETERS["num_shards"])]
  assert sorted(os.listdir(tmp_path / "examples")) == sorted(shards + ["summary.json"])
  for entry in summary["files"]:
    assert os.path.getsize(tmp_path / "examples" / entry["name"]) == entry["bytes"]
