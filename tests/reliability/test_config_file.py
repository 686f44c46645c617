"""--config_file in every script whose run is a config: the file sets values, a flag given on the
command line overrides one, YAML and JSON give the same config, a run's own resolved config loads
back, and a bad key is one line naming the file and the key, exit 2. The absl scripts' flags are
parsed in-process (their flags are removed again afterwards); nothing here loads TensorFlow."""

import contextlib
import json
import os
import runpy

import pytest
import yaml
from absl import flags

from bert_keras.data.beam_args import parse_pretraining_data_args, parse_vocab_args
from bert_keras.errors import run_main
from tests.reliability import bad_inputs as B

FLAGS = flags.FLAGS


@contextlib.contextmanager
def _script(name):
  """scripts/<name>.py's globals, its flags alone on FLAGS for the block (the flags defined before,
  e.g. by an imported pipeline.demo, are set aside and put back)."""
  saved, parsed = {n: FLAGS[n] for n in list(FLAGS)}, FLAGS.is_parsed()
  for flag in saved:
    delattr(FLAGS, flag)
  try:
    yield runpy.run_path(B.script_path(name), run_name=name)
  finally:
    for flag in list(FLAGS):
      delattr(FLAGS, flag)
    for flag_name, flag in saved.items():
      if flag_name == flag.name:  # a short name comes back with its flag
        FLAGS[flag_name] = flag
    if not parsed:
      FLAGS.unparse_flags()


def _files(tmp_path, values):
  """The same values as a .json and a .yaml file."""
  (tmp_path / "c.json").write_text(json.dumps(values))
  (tmp_path / "c.yaml").write_text(yaml.safe_dump(values))
  return str(tmp_path / "c.json"), str(tmp_path / "c.yaml")


def _one_error_line(call, capsys):
  with pytest.raises(SystemExit) as info:
    run_main(lambda argv: call())(["script"])
  lines = capsys.readouterr().err.strip().splitlines()
  assert info.value.code == 2 and len(lines) == 1, lines
  return lines[0]


def _settings(known):
  """The parsed flags but the file they came from."""
  return {k: v for k, v in vars(known).items() if k != "config_file"}


def _from_flags(module, *argv):
  FLAGS.unparse_flags()
  FLAGS(["script", *argv])
  return module["config_from_flags"]()


def test_export_model_config_file(tmp_path, capsys):
  as_json, as_yaml = _files(tmp_path, {"output_dir": "out/e", "finetuned_dir": "out/ft",
                                       "max_seq_length": 64, "jit_compile": "auto"})
  with _script("export_model") as script:
    config = _from_flags(script, f"--config_file={as_json}", "--max_seq_length=32")
    assert (config.output_dir, config.finetuned_dir, config.jit_compile) == (
        "out/e", "out/ft", "auto")
    assert config.max_seq_length == 32 and config.head_groups is None  # the flag; a default
    assert _from_flags(script, f"--config_file={as_yaml}", "--max_seq_length=32") == config
    # What the export writes (assets.extra/export_config.json) is this config's JSON.
    (tmp_path / "export_config.json").write_text(config.to_json())
    assert _from_flags(script, f"--config_file={tmp_path}/export_config.json") == config
    (tmp_path / "bad.yml").write_text(
        "output_dir: out/e\nfinetuned_dir: out/ft\nmax_seq_lenght: 64\n")
    FLAGS.unparse_flags()
    FLAGS(["script", f"--config_file={tmp_path}/bad.yml"])
    line = _one_error_line(script["config_from_flags"], capsys)
  assert line.startswith(f"error: {tmp_path}/bad.yml: max_seq_lenght: unknown key in ExportConfig")


def test_run_finetuning_config_file(tmp_path, capsys):
  values = {"task": {"task": "glue/mrpc", "learning_rate": 3e-5, "num_epochs": 2.0},
            "run": {"data_dir": "glue/MRPC", "output_dir": "out/a", "model": "bert_tiny"}}
  as_json, as_yaml = _files(tmp_path, values)
  with _script("run_finetuning") as script:
    task, run = _from_flags(script, f"--config_file={as_json}", "--output_dir=out/b",
                            "--num_epochs=1")
    assert (task.task, task.learning_rate, task.num_epochs) == ("glue/mrpc", 3e-5, 1.0)
    assert task.train_batch_size == 32  # TaskConfig's default, not a preset's
    assert (run.data_dir, run.model, run.output_dir) == ("glue/MRPC", "bert_tiny", "out/b")
    assert _from_flags(script, f"--config_file={as_yaml}", "--output_dir=out/b",
                       "--num_epochs=1") == (task, run)
    # A training run's config.json (the record keys beside task and run) loads back as a file.
    record = {"task": task.to_dict(), "run": run.to_dict(), "model": {"num_layers": 2},
              "encoder": {"init": "random"}, "vocab_file": "v.txt", "lower_case": True,
              "total_steps": 4}
    (tmp_path / "config.json").write_text(json.dumps(record))
    assert _from_flags(script, f"--config_file={tmp_path}/config.json",
                       "--output_dir=out/b") == (task, run)
    bad = dict(values, task=dict(values["task"], learning_rte=1e-5))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    FLAGS.unparse_flags()
    FLAGS(["script", f"--config_file={tmp_path}/bad.json", "--output_dir=out/b"])
    line = _one_error_line(script["config_from_flags"], capsys)
  assert line.startswith(f"error: {tmp_path}/bad.json: task.learning_rte: unknown key in")


def test_run_pretraining_config_file_in_yaml(tmp_path):
  recipe = os.path.join(B.ROOT, "configs", "training", "tiny_debug.json")
  with open(recipe, encoding="utf-8") as f:
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(json.load(f)))
  with _script("run_pretraining") as script:
    from_json = _from_flags(script, f"--config_file={recipe}", "--seed=7")
    assert _from_flags(script, f"--config_file={tmp_path}/tiny.yaml", "--seed=7") == from_json
    assert from_json.to_flat()["seed"] == 7


def test_beam_scripts_config_file(tmp_path, capsys):
  as_json, as_yaml = _files(tmp_path, {"output_dir": "out/d", "dupe_factor": 2, "num_shards": 3,
                                       "whole_word_mask": True})
  known, _ = parse_pretraining_data_args([f"--config_file={as_json}", "--num_shards=5"])
  assert (known.output_dir, known.dupe_factor, known.whole_word_mask) == ("out/d", 2, True)
  assert known.num_shards == 5 and known.masked_lm_prob == 0.15  # the flag; a default
  assert _settings(parse_pretraining_data_args([f"--config_file={as_yaml}", "--num_shards=5"])[0]) \
      == _settings(known)
  (tmp_path / "bad.yaml").write_text("output_dir: out/d\ndupe_factr: 2\n")
  line = _one_error_line(lambda: parse_pretraining_data_args(
      [f"--config_file={tmp_path}/bad.yaml"]), capsys)
  assert line.startswith(f"error: {tmp_path}/bad.yaml: dupe_factr: unknown key")
  (tmp_path / "typed.json").write_text('{"output_dir": "out/d", "dupe_factor": "2"}')
  assert _one_error_line(lambda: parse_pretraining_data_args(
      [f"--config_file={tmp_path}/typed.json"]), capsys) == (
          f"error: {tmp_path}/typed.json: dupe_factor='2' must be an integer")
  # learn_vocab (its learn_vocab_config.json loads back: tests/data/test_wordpiece_vocab_pipeline.py)
  (tmp_path / "v.yml").write_text("output_dir: out/v\nvocab_size: 900\nlower_case: false\n")
  known, _ = parse_vocab_args([f"--config_file={tmp_path}/v.yml", "--min_count=2"])
  assert (known.output_dir, known.vocab_size, known.lower_case, known.min_count) == (
      "out/v", 900, False, 2)


def test_pipeline_demo_config_file(tmp_path, capsys):
  from bert_keras.configs.pipeline import PipelineConfig
  with _script("pipeline/demo") as script:
    config = _from_flags(script, "--max_documents=3")  # what a run writes: pipeline_config.json
    (tmp_path / "pipeline_config.json").write_text(config.to_json())
    assert _from_flags(script, f"--config_file={tmp_path}/pipeline_config.json") == config
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(config.to_dict()))
    assert PipelineConfig.from_file(str(tmp_path / "p.yaml")) == config
    FLAGS.unparse_flags()
    FLAGS(["script", f"--config_file={tmp_path}/p.yaml", "--max_documents=5"])
    line = _one_error_line(script["config_from_flags"], capsys)
  assert line == (f"error: --max_documents: settings of the demo's recipe; --config_file="
                  f"{tmp_path}/p.yaml gives the whole pipeline config")


def test_flag_scripts_config_file(tmp_path):
  """predict, convert_checkpoint and train_bpe: a file of their flags by name, the flags given over
  it; a key that is no flag of the script is one line naming the file and the key, exit 2."""
  as_json, as_yaml = _files(tmp_path, {"output_dir": "out/bpe", "vocab_size": 300, "verbose": True,
                                       "corpora": ["lee_background"], "lower_case": False})
  for path in (as_json, as_yaml):
    with _script("train_bpe") as script:
      script["parse_flags_with_config_file"](["train_bpe", f"--config_file={path}", "--vocab_size=250"])
      assert (FLAGS.output_dir, FLAGS.vocab_size, FLAGS.corpora, FLAGS.lower_case, FLAGS.verbose) == (
          "out/bpe", 250, ["lee_background"], False, True)
  # absl's own flags and --verbose are flags of every script, in the file as on the command line.
  (tmp_path / "p.yaml").write_text("verbose: true\nverbosity: 1\nsaved_model: out/e\n"
                                   "text_a: a gripping film\nsaved_modle: x\n")
  B.user_error_line(B.run_script("predict", f"--config_file={tmp_path}/p.yaml"),
                    f"{tmp_path}/p.yaml: saved_modle='x': not a value of a flag")
  (tmp_path / "c.yml").write_text("verbose: false\nfrom: hf\nto: keras\nvocab_file: {a: 1}\n")
  B.user_error_line(B.run_script("convert_checkpoint", f"--config_file={tmp_path}/c.yml"),
                    f"{tmp_path}/c.yml: vocab_file=")
