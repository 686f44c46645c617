"""The real pipeline's wiring from configs (no component runs here)."""

import dataclasses

import pytest

from bert_keras.errors import UserError
from bert_keras.configs.pipeline import FineTuneConfig
from configs.demo import demo_config, smoke_config
from pipeline.definitions import build_pipeline


def test_demo_pipeline_order_and_edges(tmp_path):
  pipeline = build_pipeline(demo_config(), str(tmp_path), str(tmp_path / "serving"))
  order = [c.name for c in pipeline.ordered()]
  assert order[:5] == ["corpus_ingestion", "vocabulary", "pretraining_examples", "pretrainer",
                       "checkpoint_importer"]
  assert len(order) == 5 + 2 * 2 * 4  # two tasks x two bases x (fine-tune, eval, export, push)
  by_name = {c.name: c for c in pipeline.components}
  for task in ("polarity", "lee_similarity"):
    for base, source in (("pretrained", "pretrainer"), ("imported", "checkpoint_importer")):
      fine_tuner = by_name[f"fine_tuner_{task}_{base}"]
      assert [u.name for u in fine_tuner.upstream] == [source]
      pusher = by_name[f"pusher_{task}_{base}"]
      assert {u.name for u in pusher.upstream} == {f"exporter_{task}_{base}",
                                                   f"evaluator_{task}_{base}"}
      assert pusher.parameters["serving_dir"] == str(tmp_path / "serving" / base)
      assert order.index(f"fine_tuner_{task}_{base}") < order.index(f"pusher_{task}_{base}")
  # Per-base overrides reach only their base.
  assert by_name["fine_tuner_polarity_imported"].parameters["task_config"]["learning_rate"] == 1e-4
  assert by_name["fine_tuner_polarity_pretrained"].parameters["task_config"]["learning_rate"] == 5e-4


def test_smoke_pipeline_skips_the_import(tmp_path):
  names = [c.name for c in build_pipeline(smoke_config(), str(tmp_path)).components]
  assert "checkpoint_importer" not in names and "fine_tuner_polarity_pretrained" in names


def test_config_errors_name_the_problem():
  config = demo_config()
  with pytest.raises(UserError, match="listed twice"):
    dataclasses.replace(config, tasks=config.tasks + (FineTuneConfig(task="polarity"),))
  with pytest.raises(UserError, match="checkpoint_dir is empty"):
    dataclasses.replace(config, checkpoint_dir="")
  with pytest.raises(UserError, match="names no source"):
    dataclasses.replace(config, corpus=dataclasses.replace(config.corpus, wikipedia_dumps=()))
