"""Our .keras files load in a fresh process: the scripts that take one (convert_checkpoint,
export_model) run as subprocesses, where no bert_keras class has been imported before the load, on
an encoder.keras, a pretrainer.keras and a fine-tuned BertClassifier model.keras. In-process tests
cannot see this: the test module itself has imported the classes, which registers them with Keras.
Registering the classes imports the layers, not Beam or the training stacks that use them.
Also: the scripts' --help keeps the examples' line continuations."""

import json

import ast
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from bert_keras import interop, keras_classes
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.configs.model import get_model_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "the", "cat", "sat", "on", "mat"]
IDS = np.array([[2, 7, 8, 9, 10, 7, 11, 5, 3, 0, 0]], "int32")


def _script(name, *args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", name), *args],
                        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)


def _features(encoder):
  inputs = {"input_word_ids": IDS, "input_mask": (IDS > 0).astype("int32"),
            "input_type_ids": np.zeros_like(IDS)}
  return np.asarray(encoder(inputs, training=False)["pooled_output"])


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
  """({kind: path of a .keras file with vocab.txt beside it}, the encoder inside each)."""
  root = tmp_path_factory.mktemp("keras_files")
  keras.utils.set_random_seed(3)
  # gelu_tanh: what a Google checkpoint's "gelu" reads back as, so features compare exactly.
  config = get_model_config("bert_tiny", vocab_size=len(VOCAB), num_layers=2, hidden_size=32,
                            num_heads=2, intermediate_size=64, hidden_act="gelu_tanh")
  encoder = BertEncoder.from_model_config(config)
  models = {"encoder.keras": encoder,
            "pretrainer.keras": BertPretrainer(encoder, objective="mlm_nsp"),
            "model.keras": BertClassifier(encoder, num_classes=2)}
  paths = {}
  for name, model in models.items():
    directory = root / name.split(".")[0]
    directory.mkdir()
    (directory / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    model.save(str(directory / name))
    paths[name] = str(directory / name)
  return paths, encoder


def test_every_module_that_registers_a_class_is_imported_before_a_load():
  registering = set()
  for dirpath, _, filenames in os.walk(os.path.join(ROOT, "bert_keras")):
    for filename in filenames:
      if filename.endswith(".py"):
        path = os.path.join(dirpath, filename)
        with open(path, encoding="utf-8") as f:
          if "register_keras_serializable" in f.read() and filename != "keras_classes.py":
            registering.add(os.path.relpath(path, ROOT)[:-3].replace(os.sep, "."))
  assert registering == set(keras_classes.MODULES)


# What a load must not import: Beam and the data/training stacks (about 900 modules and a second
# more per load when the ablation study's module was listed for its one layer); sentencepiece is
# imported only when a GPT tokenizer is made.
_NOT_FOR_LOADING = ("apache_beam", "pyarrow", "sentencepiece",
                    "studies.bert_gpt_ablation.ablation_study", "bert_keras.gpt.gpt_pretraining",
                    "bert_keras.data.wikipedia_reader")

_REGISTER_ALL = """
import json, sys
import keras
from bert_keras import keras_classes
keras_classes.register_all()
# As a .keras file written while the layer was defined in the ablation study's module names it.
layer = keras.saving.deserialize_keras_object({
    "module": "bert_keras.gpt.ablation_study", "class_name": "ReverseRealTokens",
    "registered_name": "bert_keras>ReverseRealTokens", "config": {"name": "reverse_input"}})
print(json.dumps({"imported": [m for m in json.loads(sys.argv[1]) if m in sys.modules],
                  "layer": [type(layer).__module__, keras.saving.get_registered_name(type(layer))]}))
"""


def test_registering_the_classes_imports_no_beam_or_training_stack():
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  result = subprocess.run([sys.executable, "-c", _REGISTER_ALL, json.dumps(_NOT_FOR_LOADING)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
  assert result.returncode == 0, result.stderr[-2000:]
  found = json.loads(result.stdout.strip().splitlines()[-1])
  assert found["imported"] == []
  assert found["layer"] == ["bert_keras.models.reverse_real_tokens", "bert_keras>ReverseRealTokens"]


@pytest.mark.parametrize("name", ["encoder.keras", "pretrainer.keras", "model.keras"])
def test_convert_checkpoint_reads_a_keras_file_in_a_fresh_process(saved, tmp_path, name):
  paths, encoder = saved
  out = tmp_path / "google"
  result = _script("convert_checkpoint.py", "--from=keras", "--to=google",
                   f"--init_checkpoint={paths[name]}", f"--output_dir={out}")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "Could not locate class" not in result.stderr
  converted, info = interop.load_encoder(str(out))
  assert info.vocab_path == str(out / "vocab.txt")
  np.testing.assert_allclose(_features(converted), _features(encoder), atol=1e-5)


@pytest.mark.slow
def test_export_model_takes_a_keras_file_in_a_fresh_process(saved, tmp_path):
  import tensorflow as tf
  import tensorflow_text  # noqa: F401  (the exported tokenizer's ops)

  paths, encoder = saved
  out = tmp_path / "export"
  result = _script("export_model.py", f"--init_checkpoint={paths['encoder.keras']}",
                   "--max_seq_length=16", f"--output_dir={out}")
  assert result.returncode == 0, result.stderr[-2000:]
  # The exported encoder is the .keras file's: its features on the text that packs to IDS.
  loaded = tf.saved_model.load(str(out))  # held: its functions need its variables alive
  served = loaded.serve(tf.constant(["The cat sat on the mat."]))
  np.testing.assert_array_equal(served["input_mask"][0, :IDS.shape[1]], IDS[0] > 0)
  np.testing.assert_allclose(served["pooled_output"], _features(encoder), atol=1e-5)


@pytest.mark.parametrize("name", ["convert_checkpoint.py", "export_model.py"])
def test_help_keeps_the_examples_line_continuations(name):
  with open(os.path.join(ROOT, "scripts", name), encoding="utf-8") as f:
    source = f.read()
  node = ast.parse(source).body[0]  # the module docstring, as written in the file
  doc_lines = source.splitlines()[node.lineno - 1:node.end_lineno]
  continued = [line for line in doc_lines if line.endswith("\\")]
  assert continued, "the examples have continued lines"
  result = _script(name, "--help")
  assert result.returncode == 0, result.stderr[-2000:]
  shown = result.stdout.splitlines()
  for line in continued:
    assert line in shown, f"{line!r} is not a line of the --help output"
  assert "pretrainer.keras --output" not in result.stdout  # run_pretraining writes no such file
