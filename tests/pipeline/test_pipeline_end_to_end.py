"""The real pipeline end to end on a slice of the real Wikipedia dump, then again from the cache."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bert_keras.configs.pipeline import smoke_config
from bert_keras.pipeline.definitions import build_pipeline
from bert_keras.pipeline.local_runner import LocalRunner
from bert_keras.pipeline.query_served_models import find_models


@pytest.mark.slow
def test_real_pipeline_on_a_slice_then_from_cache(tmp_path):
  config = smoke_config(max_documents=12)
  serving = tmp_path / "serving"
  pipeline = build_pipeline(config, str(tmp_path / "root"), str(serving))
  runner = LocalRunner(beam_pipeline_args=["--direct_running_mode=in_memory"],
                       log_fn=lambda _: None)
  record = runner.run(pipeline)
  statuses = {c.name: c.status for c in record.components}
  assert set(statuses.values()) == {"succeeded"}, statuses
  corpus = record.component("corpus_ingestion")
  assert corpus.metrics["corpus/documents"] == 12
  vocab_size = record.component("vocabulary").metrics["vocabulary/vocab_size"]
  assert 100 < vocab_size <= config.pretraining.vocab_size
  pretrainer = record.component("pretrainer")
  assert pretrainer.metrics["model/vocab_size"] == vocab_size
  assert pretrainer.curves["model/train_loss"]  # plotted in the report
  for task in ("polarity", "lee_similarity"):
    assert record.component(f"pusher_{task}_pretrained").properties["pushed_model/pushed"]
  assert {name for name, _ in find_models(str(serving))} == {
      os.path.join("pretrained", "polarity"), os.path.join("pretrained", "lee_similarity")}
  assert os.path.exists(os.path.join(record.report_dir, "report.html"))

  # A fresh process loads the pushed SavedModels and answers.
  out = subprocess.run([sys.executable, "-m", "bert_keras.pipeline.query_served_models",
                        f"--serving_dir={serving}"], capture_output=True, text=True, check=False,
                       env=dict(os.environ, PYTHONPATH=os.getcwd()))
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.count("(p=") == 3 and out.stdout.count("score ") == 3

  # Nothing changed: everything comes from the cache, in seconds (the report's plots excluded).
  again = runner.run(build_pipeline(config, str(tmp_path / "root"), str(serving)))
  assert {c.status for c in again.components} == {"cached"}
  assert again.duration_s < 10
