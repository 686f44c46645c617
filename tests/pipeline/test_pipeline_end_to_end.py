"""The real pipeline end to end on a slice of the real Wikipedia dump (six articles, both tasks),
then again from the cache; and its compiled KFP spec (the polarity branch: every component kind)
run by kfp's own local runner (`kfp.local`, subprocesses, no Docker), whose every output matches
the local run's: the same metrics, the same blessed and pushed model. The two tests share the one
local run."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys

import pytest

from configs.demo import smoke_config
from pipeline.definitions import build_pipeline
from bert_keras.orchestration.local_runner import LocalRunner
from pipeline.query_served_models import find_models
from tests.pipeline.kfp_local import kfp_local_run, task_dir  # noqa: F401 (a fixture)

DOCUMENTS = 6
BEAM_ARGS = ["--direct_running_mode=in_memory"]
_TIMINGS = re.compile(r"seconds|per_sec|elapsed")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
  """(config, pipeline root, serving dir, runner, run record) of the one local run."""
  tmp_path = tmp_path_factory.mktemp("pipeline")
  config = smoke_config(max_documents=DOCUMENTS)
  # kfp.local's SubprocessRunner replaces "python3" in every argument with its interpreter's path,
  # the JSON of a task's inputs included, which mangles the embedded dump's path under
  # lib/python3.11/ (not so on KFP or Vertex AI): both runs read a copy of the dump.
  dump = tmp_path / "data" / os.path.basename(config.corpus.wikipedia_dumps[0])
  dump.parent.mkdir()
  shutil.copyfile(config.corpus.wikipedia_dumps[0], dump)
  config = dataclasses.replace(
      config, corpus=dataclasses.replace(config.corpus, wikipedia_dumps=(str(dump),)))
  root, serving = tmp_path / "root", tmp_path / "serving"
  runner = LocalRunner(beam_pipeline_args=BEAM_ARGS, log_fn=lambda _: None)
  record = runner.run(build_pipeline(config, str(root), str(serving)))
  return config, root, serving, runner, record


@pytest.mark.slow
def test_real_pipeline_on_a_slice_then_from_cache(local_run):
  config, root, serving, runner, record = local_run
  statuses = {c.name: c.status for c in record.components}
  assert set(statuses.values()) == {"succeeded"}, statuses
  corpus = record.component("corpus_ingestion")
  assert corpus.metrics["corpus/documents"] == DOCUMENTS
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
  out = subprocess.run([sys.executable, "-m", "pipeline.query_served_models",
                        f"--serving_dir={serving}"], capture_output=True, text=True, check=False,
                       env=dict(os.environ, PYTHONPATH=os.getcwd()))
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.count("(p=") == 3 and out.stdout.count("score ") == 3

  # Nothing changed: everything comes from the cache, in seconds (the report's plots excluded).
  again = runner.run(build_pipeline(config, str(root), str(serving)))
  assert {c.status for c in again.components} == {"cached"}
  assert again.duration_s < 10


@pytest.mark.slow
def test_real_pipeline_on_a_slice_matches_the_local_runner(tmp_path, local_run, kfp_local_run):
  config, _, serving, _, record = local_run
  # Polarity, fine-tuned from the pretrained encoder.
  config = dataclasses.replace(config, tasks=config.tasks[:1])
  kfp_pipeline = build_pipeline(config, str(tmp_path / "unused"), str(tmp_path / "kfp_serving"))
  run_dir = kfp_local_run(kfp_pipeline, beam_pipeline_args=tuple(BEAM_ARGS))

  for component in kfp_pipeline.components:
    for output, artifact_type in component.spec_class.OUTPUTS.items():
      kfp_artifact = artifact_type.load(os.path.join(
          task_dir(run_dir, component.name.replace("_", "-")),
          f"{output}_out" if output in component.inputs else output))
      local_metrics = {k.split("/", 1)[1]: v
                       for k, v in record.component(component.name).metrics.items()
                       if k.startswith(f"{output}/") and not _TIMINGS.search(k)}
      kfp_metrics = {k: v for k, v in kfp_artifact.metrics.items() if not _TIMINGS.search(k)}
      assert kfp_metrics == pytest.approx(local_metrics, rel=1e-4, abs=1e-6), component.name
  evaluation = record.component("evaluator_polarity_pretrained")
  assert evaluation.properties["blessing/blessed"] is True
  assert "evaluation/accuracy" in evaluation.metrics
  polarity = os.path.join("pretrained", "polarity")
  local_models = dict(find_models(str(serving)))
  kfp_models = find_models(str(tmp_path / "kfp_serving"))
  assert [name for name, _ in kfp_models] == [polarity]
  assert sorted(os.listdir(kfp_models[0][1])) == sorted(os.listdir(local_models[polarity]))
