"""Checkpoint directories are read only inside themselves: a Google release's `checkpoint` state
file that points elsewhere (TF1's Saver writes absolute paths, so every copied directory does) and
an HF shard index naming files outside the directory never make us read another directory's
weights. Likewise the pusher's model_name and the pipeline's serving_dir never write outside the
directories chosen for them."""

import dataclasses
import json
import os
import shutil

import numpy as np
import pytest

from tests.reliability import bad_inputs as B


# --- Google release directory: the `checkpoint` state file (open bug 13) --------------------------

@pytest.fixture(scope="module")
def releases(tmp_path_factory):
  """Two tiny releases written by tf.compat.v1.train.Saver with different weights: `original`
  and `other`; `copy` is `other` copied elsewhere, its state file naming `original`'s files."""
  from tests.interop.interop_fixtures import (TINY_GOOGLE_CONFIG, random_google_weights,
                                              write_tf1_checkpoint)
  root = tmp_path_factory.mktemp("releases")
  paths = {}
  for name, seed in (("original", 0), ("other", 1)):
    paths[name] = str(root / name)
    write_tf1_checkpoint(random_google_weights(TINY_GOOGLE_CONFIG, seed=seed), paths[name],
                         TINY_GOOGLE_CONFIG, training_state=False)
  return root, paths


def _copy_with_state(releases, tmp_path, named):
  _, paths = releases
  directory = str(tmp_path / "copy")
  shutil.copytree(paths["other"], directory)
  B.write(os.path.join(directory, "checkpoint"),
          f'model_checkpoint_path: "{named}"\nall_model_checkpoint_paths: "{named}"\n')
  return directory


def _word_embeddings(prefix):
  import tensorflow as tf
  return tf.train.load_checkpoint(prefix).get_tensor("bert/embeddings/word_embeddings")


@pytest.mark.parametrize("named", [
    "{original}/bert_model.ckpt",     # absolute, as TF1's Saver writes it: the original location
    "../original/bert_model.ckpt",    # relative, escaping the directory
    "{original}/model.ckpt-1000",     # absolute, a name that does not exist here
    "/etc/passwd",
])
def test_state_file_pointing_outside_is_not_followed(releases, tmp_path, named):
  from bert_keras.interop import google_checkpoint, load_encoder
  _, paths = releases
  directory = _copy_with_state(releases, tmp_path, named.format(original=paths["original"]))
  prefix = google_checkpoint.find_prefix(directory)
  assert prefix == os.path.join(directory, "bert_model.ckpt")
  encoder, info = load_encoder(directory)
  assert info.path == prefix
  loaded = encoder.token_embedding.embeddings.numpy()
  np.testing.assert_array_equal(loaded, _word_embeddings(os.path.join(paths["other"], "bert_model.ckpt")))
  assert not np.array_equal(loaded, _word_embeddings(os.path.join(paths["original"], "bert_model.ckpt")))


def test_state_file_inside_the_directory_is_followed(releases, tmp_path):
  from bert_keras.interop import google_checkpoint
  directory = _copy_with_state(releases, tmp_path, "model.ckpt-7")
  for suffix in (".index", ".data-00000-of-00001"):
    shutil.copyfile(os.path.join(directory, "bert_model.ckpt" + suffix),
                    os.path.join(directory, "model.ckpt-7" + suffix))
  assert google_checkpoint.find_prefix(directory) == os.path.join(directory, "model.ckpt-7")
  # The original's own state file (absolute, written by the Saver) still works in place.
  _, paths = releases
  assert google_checkpoint.find_prefix(paths["original"]) == os.path.join(paths["original"],
                                                                          "bert_model.ckpt")


# --- HF shard index (open bug 14) ----------------------------------------------------------------

def _hf_dir(tmp_path, weight_map):
  directory = tmp_path / "hf"
  B.write(str(directory / "config.json"), "{}")
  B.write(str(directory / "model.safetensors.index.json"),
          json.dumps({"metadata": {}, "weight_map": weight_map}))
  return str(directory)


@pytest.mark.parametrize("shard, needle", [
    ("../../x.safetensors", "escapes"),
    ("/abs/x.safetensors", "is absolute"),
    ("~/x.safetensors", "is absolute"),
    (5, "expected a shard file name (a string)"),
    (None, "expected a shard file name (a string)"),
    (["a.safetensors"], "expected a shard file name (a string)"),
])
def test_hf_weight_map_shard_outside_or_not_a_string(tmp_path, shard, needle):
  from bert_keras.interop import hf_checkpoint
  directory = _hf_dir(tmp_path, {"embeddings.word_embeddings.weight": "model-1.safetensors",
                                 "pooler.dense.weight": shard})
  B.raises(lambda: hf_checkpoint.weights_files(directory), "model.safetensors.index.json",
          "weight_map['pooler.dense.weight']", needle)


def test_hf_weight_map_inside_is_listed_once(tmp_path):
  from bert_keras.interop import hf_checkpoint
  directory = _hf_dir(tmp_path, {"a": "model-2.safetensors", "b": "model-1.safetensors",
                                 "c": "model-1.safetensors"})
  assert hf_checkpoint.weights_files(directory) == [
      os.path.join(directory, "model-1.safetensors"), os.path.join(directory, "model-2.safetensors")]
  empty = _hf_dir(tmp_path / "e", {})
  B.raises(lambda: hf_checkpoint.weights_files(empty), "'weight_map' is empty")


# --- pipeline paths (open bugs 15 and 16, fixed by their owners; regression tests) ----------------

class _Artifact:
  """The parts of bert_keras.orchestration.artifact.Artifact the pusher uses."""

  def __init__(self, uri, **properties):
    self.uri, self.properties, self.metrics = str(uri), dict(properties), {}

  def path(self, relative=""):
    return os.path.join(self.uri, relative)


def _push(tmp_path, model_name):
  from components.pusher.executor import PusherExecutor
  saved = tmp_path / "saved"
  B.write(str(saved / "saved_model.pb"), b"pb")
  serving = tmp_path / "root" / "serving"
  serving.mkdir(parents=True, exist_ok=True)
  inputs = {"saved_model": _Artifact(saved, task="glue/sst2"),
            "blessing": _Artifact(tmp_path / "blessing", blessed=True)}
  outputs = {"pushed_model": _Artifact(tmp_path / "pushed")}
  PusherExecutor().run(inputs, outputs, {"model_name": model_name, "serving_dir": str(serving)})
  return serving, outputs["pushed_model"]


def test_pusher_model_name_stays_inside_the_serving_dir(tmp_path):
  B.raises(lambda: _push(tmp_path, ".."), "model_name='..'", "not a usable file name")
  # "." would otherwise push the versions straight into the serving directory itself.
  B.raises(lambda: _push(tmp_path, "."), "model_name='.'", "not a usable file name")
  assert sorted(os.listdir(tmp_path)) == ["root", "saved"]
  assert os.listdir(tmp_path / "root") == ["serving"] and not os.listdir(tmp_path / "root" / "serving")
  # Separators become "_": "../../x" is the single name ".._.._x" inside the serving directory.
  serving, pushed = _push(tmp_path, "../../x")
  assert os.listdir(serving) == [".._.._x"] and sorted(os.listdir(tmp_path / "root")) == ["serving"]
  assert pushed.properties["pushed_destination"] == os.path.abspath(serving / ".._.._x" / "1")


def test_pipeline_serving_dir_stays_inside_the_pipeline_root(tmp_path):
  from configs.demo import smoke_config
  from pipeline.definitions import build_pipeline
  B.raises(lambda: build_pipeline(dataclasses.replace(smoke_config(), serving_dir="../../etc"), str(tmp_path)),
          "serving_dir='../../etc'", "escapes")
  B.raises(lambda: build_pipeline(dataclasses.replace(smoke_config(), serving_dir="/etc"), str(tmp_path)),
          "serving_dir='/etc' is absolute")
