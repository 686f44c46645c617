"""Loading a checkpoint, config or dataset never runs code from it, and paths cannot escape the
directory chosen for them.

1. A scan of the project's own source (bert_keras, components, pipeline, configs, scripts) for the
   ways code gets executed from data: pickle and its relatives, eval/exec, trust_remote_code,
   yaml.load, np.load(allow_pickle=True), torch.load, Keras safe_mode=False. Legitimate uses are
   allow-listed below with the reason.
2. Pickles disguised as every checkpoint file name, and a `.keras` file holding a Lambda layer, are
   refused with a UserError, and the payload (which would create a file) never runs.
3. Configs with unknown keys or code in their values are rejected as data.
4. bert_keras.safety.safe_join refuses "../", absolute and symlinked escapes.
"""

import json
import os
import pickle
import re
import shutil

import pytest

from bert_keras.errors import UserError
from bert_keras.safety import safe_join, safe_name
from tests.reliability import bad_inputs as B

SOURCE_DIRS = ("bert_keras", "scripts")
# pattern name -> regex over source lines (comments and docstrings are scanned too: cheap and strict)
FORBIDDEN = {
    "pickle": r"^\s*(import|from)\s+(pickle|cPickle|dill|cloudpickle|shelve|marshal|joblib)\b"
              r"|\b(pickle|dill|cloudpickle|marshal|joblib)\.(loads?|Unpickler)\b",
    "eval/exec": r"(?<![\w.])(eval|exec)\s*\(",
    "compile()": r"(?<![\w.])compile\s*\(\s*[^)]*['\"]exec['\"]",
    "trust_remote_code": r"trust_remote_code\s*=\s*True",
    "yaml.load": r"\byaml\.(unsafe_)?load\s*\((?![^)]*SafeLoader)",
    "np.load(allow_pickle)": r"allow_pickle\s*=\s*True",
    "torch.load": r"\btorch\.load\s*\(",
    "keras safe_mode=False": r"safe_mode\s*=\s*False",
    "__import__": r"__import__\s*\(",
    "os.system/popen": r"\bos\.(system|popen)\s*\(",
    "shell=True": r"shell\s*=\s*True",
}
# (file, pattern name): why it is safe.
ALLOWED = {}


def _project_sources():
  for top in SOURCE_DIRS:
    for directory, _, names in os.walk(os.path.join(B.ROOT, top)):
      for name in names:
        if name.endswith(".py"):
          yield os.path.relpath(os.path.join(directory, name), B.ROOT)


def test_source_has_no_code_execution_from_data():
  found = []
  sources = list(_project_sources())
  assert len(sources) > 50, sources  # the scan really covers the project
  for rel in sources:
    with open(os.path.join(B.ROOT, rel), encoding="utf-8") as f:
      for number, line in enumerate(f, 1):
        for name, pattern in FORBIDDEN.items():
          if re.search(pattern, line) and (rel, name) not in ALLOWED:
            found.append(f"{rel}:{number}: {name}: {line.strip()}")
  assert not found, "\n".join(found)


def test_scan_patterns_catch_what_they_should():
  """The regexes are not vacuous: each flags its canonical dangerous line and spares safe look-alikes."""
  dangerous = {
      "pickle": "obj = pickle.load(f)", "eval/exec": "x = eval(text)",
      "compile()": "code = compile(src, 'f', 'exec')",
      "trust_remote_code": "AutoModel.from_pretrained(p, trust_remote_code=True)",
      "yaml.load": "cfg = yaml.load(f)", "np.load(allow_pickle)": "np.load(p, allow_pickle=True)",
      "torch.load": "sd = torch.load(p)", "keras safe_mode=False": "load_model(p, safe_mode=False)",
      "__import__": "__import__('os')", "os.system/popen": "os.system(cmd)",
      "shell=True": "subprocess.run(cmd, shell=True)",
  }
  for name, line in dangerous.items():
    assert re.search(FORBIDDEN[name], line), name
  for line in ("model.evaluate(x)", "yaml.load(f, Loader=yaml.SafeLoader)", "tf.executing_eagerly()",
               "re.compile(r'x')", "# pickle-based weights are never loaded"):
    assert not any(re.search(p, line) for p in FORBIDDEN.values()), line


# --- Disguised pickles and code in model files ----------------------------------------------------

class _Payload:
  """Unpickling this runs `touch <sentinel>`: if the sentinel exists, code ran."""

  def __init__(self, sentinel):
    self.sentinel = sentinel

  def __reduce__(self):
    return (os.system, (f"touch {self.sentinel}",))


HF_CONFIG = {"model_type": "bert", "vocab_size": 20, "hidden_size": 8, "num_hidden_layers": 1,
             "num_attention_heads": 2, "intermediate_size": 16}


@pytest.mark.parametrize("layout", [
    "model.keras", "encoder.weights.h5", "model.safetensors", "pytorch_model.bin", "model.pt",
    "weights.pkl", "hf_dir_with_only_pytorch_model.bin", "bert_model.ckpt.index",
])
def test_pickle_disguised_as_checkpoint_is_refused(tmp_path, layout):
  from bert_keras import interop
  sentinel = tmp_path / "code_ran"
  payload = pickle.dumps(_Payload(str(sentinel)))
  directory = tmp_path / "ckpt"
  if layout == "hf_dir_with_only_pytorch_model.bin":
    B.write(str(directory / "config.json"), json.dumps(HF_CONFIG))
    B.write(str(directory / "pytorch_model.bin"), payload)
    target = str(directory)
  elif layout == "bert_model.ckpt.index":
    B.write(str(directory / "bert_config.json"), json.dumps(
        {k: v for k, v in HF_CONFIG.items() if k != "model_type"}))
    B.write(str(directory / "bert_model.ckpt.index"), payload)
    B.write(str(directory / "bert_model.ckpt.data-00000-of-00001"), payload)
    target = str(directory)
  else:
    if layout == "model.safetensors":
      B.write(str(directory / "config.json"), json.dumps(HF_CONFIG))
    target = B.write(str(directory / layout), payload)
  with pytest.raises(UserError) as info:
    interop.load_encoder(target)
  assert str(info.value).startswith(str(directory)), info.value
  assert not sentinel.exists(), "the pickle payload ran"


def test_keras_file_with_code_is_refused(tmp_path):
  """A .keras file whose graph holds a Python lambda (code) is not deserialised (Keras safe_mode)."""
  import keras
  from bert_keras import interop
  sentinel = tmp_path / "code_ran"
  command = f"touch {sentinel}"
  inputs = keras.Input((4,))
  outputs = keras.layers.Lambda(lambda x: x + float(os.system(command) or 0))(inputs)
  path = str(tmp_path / "encoder.keras")
  keras.Model(inputs, outputs).save(path)
  sentinel.unlink(missing_ok=True)  # tracing while saving ran it once, here, on purpose
  with pytest.raises(UserError) as info:
    interop.load_encoder(path)
  assert path in str(info.value)
  assert not sentinel.exists(), "the lambda in the .keras file ran while loading"


# --- Configs are data ----------------------------------------------------------------------------

CODE = "__import__('os').system('touch {sentinel}')"


def test_model_and_training_configs_reject_code_and_unknown_keys(tmp_path):
  from bert_keras.configs.model import ModelConfig
  from bert_keras.configs.training import TrainingConfig
  sentinel = tmp_path / "code_ran"
  code = CODE.format(sentinel=sentinel)
  cases = [
      (ModelConfig.from_file, {"hidden_act": code}, "hidden_act="),
      (ModelConfig.from_file, {"vocab_size": code}, "vocab_size="),
      (ModelConfig.from_file, {"__class__": "os.system"}, "__class__: unknown key in ModelConfig"),
      (TrainingConfig.from_file, {"model": {"model": code}}, "unknown model preset"),
      (TrainingConfig.from_file, {"optimizer": {"optimizer": code}}, "optimizer="),
      (TrainingConfig.from_file, {"model": {"model_overrides": {"hidden_act": code}}},
       "hidden_act="),
      (TrainingConfig.from_file, {"exec": "1"}, "exec: unknown key in TrainingConfig"),
  ]
  for i, (load, values, needle) in enumerate(cases):
    path = B.write(str(tmp_path / f"config_{i}.json"), json.dumps(values))
    with pytest.raises(UserError) as info:
      load(path)
    assert needle in str(info.value), (values, str(info.value))
  assert not sentinel.exists()


@pytest.mark.parametrize("file_name, values", [
    ("bert_config.json", {"hidden_act": CODE}),
    ("config.json", {"model_type": "bert", "hidden_act": CODE}),
    ("config.json", {"model_type": "bert", "auto_map": {"AutoModel": "evil.Model"},
                     "trust_remote_code": True, "architectures": ["EvilModel"]}),
])
def test_checkpoint_configs_with_code_are_data(tmp_path, file_name, values):
  """Checkpoint configs never name code to run: unsupported values are refused, and auto_map /
  trust_remote_code entries are ignored (nothing is imported from the checkpoint directory)."""
  from bert_keras.interop import google_checkpoint, hf_checkpoint
  sentinel = tmp_path / "code_ran"
  base = dict(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
              intermediate_size=16)
  values = {k: (v.format(sentinel=sentinel) if isinstance(v, str) else v) for k, v in values.items()}
  convert = (google_checkpoint.config_from_google if file_name == "bert_config.json"
             else hf_checkpoint.config_from_hf)
  try:
    config = convert({**base, **values}, str(tmp_path / file_name))
  except UserError as e:
    assert "hidden_act=" in str(e), e
  else:
    assert "auto_map" in values and config.hidden_act in ("gelu", "gelu_tanh", "relu")
  assert not sentinel.exists()


# --- Paths stay inside the output directory --------------------------------------------------------

@pytest.mark.parametrize("relative", ["../../etc/passwd", "..", "a/../../b", "/etc", "~/x", "",
                                      "a\x00b", "serving/../../x"])
def test_safe_join_refuses_escapes(tmp_path, relative):
  with pytest.raises(UserError) as info:
    safe_join(str(tmp_path), relative, "serving_dir")
  assert "serving_dir=" in str(info.value)


@pytest.mark.parametrize("relative", ["model", "a/b/c", "a/../b", "./x", "sub/dir/"])
def test_safe_join_allows_paths_inside(tmp_path, relative):
  joined = safe_join(str(tmp_path), relative)
  assert os.path.realpath(joined).startswith(os.path.realpath(str(tmp_path)))


def test_safe_join_follows_symlinks(tmp_path):
  outside = tmp_path / "outside"
  outside.mkdir()
  base = tmp_path / "out"
  base.mkdir()
  os.symlink(outside, base / "link")
  with pytest.raises(UserError, match="escapes"):
    safe_join(str(base), "link/model")
  shutil.rmtree(outside)


@pytest.mark.parametrize("name", ["..", ".", "", "a/b", "x\x00"])
def test_safe_name_refuses_non_names(name):
  with pytest.raises(UserError):
    safe_name(name, "model_name")


def test_safe_name_keeps_plain_names():
  assert safe_name("glue_sst2") == "glue_sst2"
