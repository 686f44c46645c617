"""The scale path of the Beam scripts (Dataflow, gs:// paths) fails with one error line, exit 2:
the DataflowRunner without Beam's GCP extras (it used to be a bare ImportError traceback when the
pipeline ran, after the output's staging directory was made), and a vocabulary or output directory
the filesystem cannot reach (a FailedPreconditionError / ValueError traceback). Nothing here
touches the network: the runner check fails at an import, the filesystem failures are raised by
stand-ins."""

import os
import sys

import pytest
import tensorflow as tf

from bert_keras import beam_runner
from bert_keras.data import pretraining_data_pipeline as pdp
from bert_keras.data import wordpiece_vocab_pipeline as wvp
from bert_keras.resources import uncased_vocab_path
from bert_keras.text import vocab
from tests.reliability import bad_inputs as B

_DATAFLOW = ["--runner=DataflowRunner", "--project=my-project", "--region=us-central1",
             "--temp_location=gs://bucket/tmp"]


# Patched in sys.modules to stand for installed or missing GCP extras.
_APICLIENT = beam_runner.DATAFLOW_CLIENT_MODULE


def _corpus(tmp_path) -> str:
  path = tmp_path / "corpus.txt"
  path.write_text("The first sentence.\nThe second one.\n\nAnother document.\nIts end.\n",
                  encoding="utf-8")
  return str(path)


@pytest.mark.parametrize("script", ["create_pretraining_data", "learn_vocab"])
def test_dataflow_runner_without_gcp_extras_is_one_error_line(script, tmp_path):
  out = tmp_path / "out"
  result = B.run_script(script, f"--input_files={_corpus(tmp_path)}", "--input_format=bert_text",
                        f"--output_dir={out}", *_DATAFLOW, timeout=120, without_gcp_extras=True)
  import apache_beam  # pylint: disable=import-outside-toplevel
  B.user_error_line(result, "--runner=DataflowRunner", "Dataflow runner is not available",
                    f'pip install "apache-beam[gcp]=={apache_beam.__version__}"')
  assert not out.exists()  # refused before the staging directory is made


@pytest.mark.parametrize("runner", ["DataflowRunner", "dataflow", "TestDataflowRunner"])
def test_runner_check_names_the_install_command(runner, monkeypatch):
  monkeypatch.setitem(sys.modules, _APICLIENT, None)  # the import fails, as without the extras
  message = B.raises(lambda: beam_runner.check_runner_available([f"--runner={runner}"]),
                     f"--runner={runner}", 'pip install "apache-beam[gcp]==')
  assert "apache-beam[gcp]==2." in message, message
  for local in ([], ["--runner=FnApiRunner"], ["--runner", "DirectRunner"]):
    beam_runner.check_runner_available(local)  # never imports the Dataflow client


def test_unreachable_gs_vocabulary_is_named_with_the_reason(monkeypatch):
  def offline(path):
    raise tf.errors.FailedPreconditionError(
        None, None, "Error executing an HTTP request: libcurl code 6 meaning 'Could not resolve "
        f"hostname'\n\t when reading metadata of {path}")

  monkeypatch.setattr(tf.io.gfile, "exists", offline)
  B.raises(lambda: vocab.load_vocab("gs://bucket/vocab.txt"),
           "gs://bucket/vocab.txt: cannot read the vocabulary file (FailedPreconditionError: ",
           "Could not resolve hostname'; when reading metadata of gs://bucket/vocab.txt)")


def test_unreadable_local_vocabulary_is_named(tmp_path, monkeypatch):
  """A file the process may not read (chmod does not stop root, so open() is made to refuse)."""
  path = tmp_path / "vocab.txt"
  path.write_text("[PAD]\n[UNK]\n", encoding="utf-8")
  real_open = open

  def denied(file, *args, **kwargs):
    if str(file) == str(path):
      raise PermissionError(13, "Permission denied", str(file))
    return real_open(file, *args, **kwargs)

  monkeypatch.setattr("builtins.open", denied)
  B.raises(lambda: vocab.load_vocab(str(path)),
           f"{path}: cannot read the vocabulary file (PermissionError: ", "Permission denied")


def test_create_pretraining_data_names_an_unreachable_output_dir(tmp_path, monkeypatch):
  def no_filesystem(output_dir):
    raise ValueError("Unable to get filesystem from specified path, please use the correct path "
                     "or ensure the required dependency is installed, e.g., pip install "
                     f"apache-beam[gcp]. Path specified: {output_dir}/.staging/")

  monkeypatch.setattr(pdp, "prepare_staging_dir", no_filesystem)
  argv = [f"--input_files={_corpus(tmp_path)}", "--input_format=bert_text",
          "--output_dir=gs://bucket/out", f"--vocab_file={uncased_vocab_path()}",
          "--direct_running_mode=in_memory"]
  B.raises(lambda: pdp.run(argv),
           "--output_dir=gs://bucket/out: cannot create the staging directory "
           "gs://bucket/out/.staging (ValueError: Unable to get filesystem")


def test_learn_vocab_names_an_unreachable_output_dir(tmp_path, monkeypatch):
  def offline(path):
    raise tf.errors.FailedPreconditionError(None, None, f"Could not resolve host\n\t {path}")

  monkeypatch.setattr(tf.io.gfile, "exists", offline)
  argv = [f"--input_files={_corpus(tmp_path)}", "--input_format=bert_text",
          "--output_dir=gs://bucket/vocab", "--vocab_size=200", "--direct_running_mode=in_memory"]
  B.raises(lambda: wvp.run(argv), "--output_dir=gs://bucket/vocab: cannot reach the output "
           "directory (FailedPreconditionError: Could not resolve host; gs://bucket/vocab)")


def test_a_local_output_dir_error_that_is_a_bug_keeps_its_traceback():
  with pytest.raises(KeyError):
    with pdp.output_dir_errors(os.path.join("local", "dir"), "write"):
      raise KeyError("a bug")
