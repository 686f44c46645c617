"""Beam defaults of the Beam components: never the Prism download, explicit runners untouched; a
Dataflow runner without Beam's GCP extras is refused with one error line before any pipeline is
built, as the data scripts do, and by the launcher before anything is written. Nothing here
touches the network: the runner check fails at an import."""

import os
import subprocess
import sys

import pytest

from bert_keras import beam_runner
from bert_keras.orchestration.base_executor import ExecutionContext
from bert_keras.beam_runner import local_beam_args
from bert_keras.orchestration.component_launcher import ComponentLauncher
from bert_keras.orchestration.standard_artifacts import Corpus, Vocabulary
from components.checkpoint_importer.spec import CheckpointImporterSpec
from components.corpus_ingestion.spec import CorpusIngestionSpec
from components.fine_tuner.spec import FineTunerSpec
from components.pretraining_examples.spec import PretrainingExamplesSpec
from components.pusher.spec import PusherSpec
from components.vocabulary.spec import VocabularySpec
from tests.reliability import bad_inputs as B

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_DATAFLOW = ["--runner=DataflowRunner", "--project=p", "--region=us-central1",
             "--temp_location=gs://b/tmp"]


# Patched in sys.modules to stand for installed or missing GCP extras.
_APICLIENT = beam_runner.DATAFLOW_CLIENT_MODULE


def test_default_is_local_fnapi_runner_on_all_cores():
  assert local_beam_args([]) == ["--runner=FnApiRunner", "--direct_running_mode=multi_processing",
                                 f"--direct_num_workers={os.cpu_count() or 1}"]


def test_user_choices_are_kept():
  assert local_beam_args(["--direct_running_mode=in_memory"]) == [
      "--runner=FnApiRunner", "--direct_running_mode=in_memory", "--direct_num_workers=1"]
  assert local_beam_args(["--direct_num_workers=1"])[-1] == "--direct_running_mode=multi_processing"
  explicit = ["--runner=FlinkRunner", "--flink_master=localhost:8081"]
  assert local_beam_args(explicit) == explicit


def test_dataflow_with_its_extras_is_passed_through(monkeypatch):
  monkeypatch.setitem(sys.modules, _APICLIENT, sys)  # any module: the import succeeds
  assert local_beam_args(_DATAFLOW) == _DATAFLOW


def _executor_inputs(spec, tmp_path):
  """(inputs, outputs, parameters) enough for `spec`'s executor to reach its Beam options."""
  corpus = tmp_path / "corpus"
  corpus.mkdir()
  (corpus / "corpus.txt").write_text("One sentence.\nAnother.\n", encoding="utf-8")
  vocabulary = tmp_path / "vocabulary"
  vocabulary.mkdir()
  (vocabulary / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\none\n",
                                        encoding="utf-8")
  available = {"corpus": Corpus(str(corpus)), "vocabulary": Vocabulary(str(vocabulary))}
  inputs = {name: available[name] for name in spec.INPUTS}
  outputs = {}
  for name, artifact_type in spec.OUTPUTS.items():
    (tmp_path / f"out_{name}").mkdir()
    outputs[name] = artifact_type(str(tmp_path / f"out_{name}"))
  given = {"bert_text_corpora": [str(corpus / "corpus.txt")]} if spec is CorpusIngestionSpec else {}
  return inputs, outputs, spec.resolve_parameters(given)


@pytest.mark.parametrize("spec", [CorpusIngestionSpec, VocabularySpec, PretrainingExamplesSpec])
def test_every_beam_executor_refuses_dataflow_without_its_extras(spec, tmp_path, monkeypatch):
  assert spec.USES_BEAM
  monkeypatch.setitem(sys.modules, _APICLIENT, None)  # the import fails, as without the extras
  inputs, outputs, parameters = _executor_inputs(spec, tmp_path)
  executor = spec.executor_class()(ExecutionContext(beam_pipeline_args=_DATAFLOW))
  message = B.raises(lambda: executor.run(inputs, outputs, parameters), "--runner=DataflowRunner",
                     "Dataflow runner is not available", 'pip install "apache-beam[gcp]==')
  for artifact in outputs.values():
    assert os.listdir(artifact.uri) == []  # refused before the pipeline wrote anything
  # The spec's own check, which the launcher and the pipeline runner make before anything runs,
  # refuses with the executor's message.
  assert B.raises(lambda: spec.check_runtime_options(_DATAFLOW)) == message


@pytest.mark.parametrize("spec", [CheckpointImporterSpec, FineTunerSpec, PusherSpec])
def test_components_without_beam_accept_any_beam_options(spec, monkeypatch):
  assert not spec.USES_BEAM
  monkeypatch.setitem(sys.modules, _APICLIENT, None)
  spec.check_runtime_options(_DATAFLOW)


def test_launcher_refuses_dataflow_without_its_extras_before_writing_anything(tmp_path,
                                                                             monkeypatch):
  monkeypatch.setitem(sys.modules, _APICLIENT, None)
  out = tmp_path / "outputs" / "corpus"
  context = ExecutionContext(beam_pipeline_args=_DATAFLOW)
  B.raises(lambda: ComponentLauncher(CorpusIngestionSpec, "corpus_ingestion", {},
                                     {"corpus": str(out)}, {"bert_text_corpora": ["corpus.txt"]},
                                     context=context),
           "--runner=DataflowRunner", "Dataflow runner is not available")
  assert os.listdir(tmp_path) == []


def test_component_cli_with_dataflow_without_its_extras_is_one_error_line(tmp_path):
  corpus = tmp_path / "corpus.txt"
  corpus.write_text("The first sentence.\nThe second one.\n\nAnother document.\n", encoding="utf-8")
  out = tmp_path / "corpus_artifact"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
  result = subprocess.run(
      [sys.executable, *B.hide_gcp_extras([
          "-m", "components.cli", "corpus_ingestion", f'--param=bert_text_corpora=["{corpus}"]',
          f"--output_artifact=corpus={out}", f"--beam_pipeline_args={' '.join(_DATAFLOW)}"])],
      cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
  import apache_beam  # pylint: disable=import-outside-toplevel
  line = B.user_error_line(result, "--runner=DataflowRunner", "Dataflow runner is not available",
                           f'pip install "apache-beam[gcp]=={apache_beam.__version__}"')
  assert line.startswith("error: --runner=DataflowRunner: ")  # the message alone, no class name
  assert not out.exists()
  assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]  # no staging or temporary directory left
