"""The BERT scripts under bad input: exit status 2, one `error:` line naming the file, line or value,
no traceback. Each case is a real subprocess (the user's view); the many reader variants behind these
run in-process in test_reader_errors.py."""

import json
import os

import pytest

from tests.reliability import bad_inputs as B


@pytest.fixture(scope="module")
def files(tmp_path_factory):
  root = tmp_path_factory.mktemp("bad_inputs")
  p = lambda *parts: str(root.joinpath(*parts))
  B.write(p("mrpc", "train.tsv"), B.mrpc_rows(["1", "0"]) + "1\tonly two\n")
  B.write(p("mrpc", "dev.tsv"), B.mrpc_rows(["1"]))
  B.write(p("sst2", "train.tsv"), "sentence\tlabel\nthe film\t0\nbad film\t0\n")
  B.write(p("sst2", "dev.tsv"), "sentence\tlabel\nthe film\t0\ngood film\t1\n")
  B.write(p("mrpc_ok", "train.tsv"), B.mrpc_rows(["1", "0"]))
  B.write(p("mrpc_ok", "dev.tsv"), B.mrpc_rows(["1", "0"]))
  B.write(p("unknown_key.json"), json.dumps({"model": {"model": "bert_tiny"}, "optimizer": {"num_trian_steps": 5}}))
  B.write(p("hf_pickle", "config.json"), "{}")
  B.write(p("hf_pickle", "pytorch_model.bin"), b"\x80\x04\x95cos\nsystem\n.")
  B.write(p("bad.jsonl"), '{"text_a": "fine"}\n{not json\n')
  # Passes predict.py's checks before TensorFlow loads; the input errors below come before loading.
  B.write(p("stub_model", "saved_model.pb"), b"")
  return dict(root=str(root), p=p, vocab=B.write_vocab(p("vocab")),
              config=B.write_model_config(p("model_config.json")),
              big_vocab_config=B.write_model_config(p("big_vocab.json"), vocab_size=100))


def _finetune(files, task, data, *extra):
  return B.run_script("run_finetuning", f"--task={task}", f"--data_dir={files['p'](data)}",
                      f"--output_dir={files['p']('out', task.replace('/', '_'))}",
                      f"--model={files['config']}", f"--vocab_file={files['vocab']}",
                      "--num_epochs=1", "--train_batch_size=2", "--max_seq_length=32", "--save_model=false",
                      *extra)


def test_run_finetuning_malformed_glue_row(files):
  B.user_error_line(_finetune(files, "glue/mrpc", "mrpc"), "mrpc/train.tsv:4:",
                    "2 tab-separated columns", "expected 5 as in the header")


def test_run_finetuning_labels_differ_between_train_and_dev(files):
  B.user_error_line(_finetune(files, "glue/sst2", "sst2"), "labels differ between train ['0']",
                    "['1'] never occur in train")


def test_run_finetuning_vocab_does_not_match_model(files):
  B.user_error_line(_finetune(files, "glue/mrpc", "mrpc_ok",
                              f"--model={files['big_vocab_config']}"),
                    files["vocab"], "20 tokens", "vocab_size=100")


def test_run_pretraining_unknown_config_key(files):
  path = files["p"]("unknown_key.json")
  B.user_error_line(B.run_script("run_pretraining", f"--config_file={path}",
                                 f"--output_dir={files['p']('pretrain')}"),
                    path, "num_trian_steps: unknown key in OptimizerConfig")


def test_convert_checkpoint_refuses_pickle(files):
  B.user_error_line(B.run_script("convert_checkpoint", "--from=hf", "--to=keras",
                                 f"--init_checkpoint={files['p']('hf_pickle')}",
                                 f"--output_dir={files['p']('converted')}"),
                    "pytorch_model.bin (a pickle)", "never loaded")
  assert not os.path.exists(files["p"]("converted", "encoder.keras"))


def test_export_model_missing_finetune_dir(files):
  missing = files["p"]("no_such_run")
  B.user_error_line(B.run_script("export_model", f"--finetuned_dir={missing}",
                                 f"--output_dir={files['p']('export')}"),
                    missing, "no model.keras")


def test_predict_malformed_jsonl(files):
  path = files["p"]("bad.jsonl")
  B.user_error_line(B.run_script("predict", f"--saved_model={files['p']('stub_model')}",
                                 f"--input_files={path}"), f"{path}:2: not valid JSON")


def test_predict_batch_size_below_one(files):
  for size in ("0", "-3"):
    B.user_error_line(B.run_script("predict", f"--saved_model={files['p']('stub_model')}",
                                   "--text_a=good", f"--batch_size={size}"),
                      "batch_size", "(see --help)")


def test_predict_input_that_is_not_text_names_file_and_line(files):
  path = B.write(files["p"]("not_text.jsonl"), '{"text_a": "fine"}\n\n{"text_a": 5}\n')
  B.user_error_line(B.run_script("predict", f"--saved_model={files['p']('stub_model')}",
                                 f"--input_files={path}"), f"{path}:3: text_a=5 must be a string")


def test_predict_output_dir_missing_is_checked_before_predicting(files):
  out = files["p"]("no_such_dir", "out.jsonl")
  B.user_error_line(B.run_script("predict", f"--saved_model={files['p']('stub_model')}",
                                 "--text_a=good", f"--output_file={out}"),
                    out, "no such directory")


def test_predict_failed_write_keeps_the_earlier_output(files, tmp_path):
  """The output is written to a temporary name and renamed: a write that fails midway (here a
  string UTF-8 cannot encode, as a full disk would) leaves the earlier output file whole."""
  out = B.write(str(tmp_path / "out.jsonl"), '{"label": 1}\n')
  driver = B.write(str(tmp_path / "driver.py"), f"""
import runpy, sys
from bert_keras.export import saved_model_predictor as predictor
predictor.load = lambda path: None
predictor.predict = lambda *args, **kwargs: [{{"answer": "ok"}}, {{"answer": "\\ud800"}}]
sys.argv = ["predict.py", "--saved_model={files['p']('stub_model')}", "--text_a=good",
            "--output_file={out}"]
runpy.run_path({os.path.join(B.SCRIPTS, "predict.py")!r}, run_name="__main__")
""")
  import subprocess, sys  # pylint: disable=g-import-not-at-top,multiple-imports
  result = subprocess.run([sys.executable, driver], cwd=B.ROOT, capture_output=True, text=True,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="",
                                   PYTHONPATH=B.ROOT), timeout=240)
  assert result.returncode != 0 and "UnicodeEncodeError" in result.stderr, result.stderr[-2000:]
  assert open(out, encoding="utf-8").read() == '{"label": 1}\n'
  assert sorted(os.listdir(tmp_path)) == ["driver.py", "out.jsonl"]  # no temporary file left


def test_run_finetuning_feature_layers_not_integers(files):
  B.user_error_line(_finetune(files, "glue/mrpc", "mrpc_ok", "--approach=feature_based",
                              "--feature_layers=a,b"), "feature_layers=['a', 'b']", "integer")


def test_run_finetuning_negative_max_train_examples(files):
  B.user_error_line(_finetune(files, "glue/mrpc", "mrpc_ok", "--max_train_examples=-5"),
                    "max_train_examples", "(see --help)")


def test_run_pretraining_special_token_ids_not_integers(files):
  B.user_error_line(B.run_script("run_pretraining", "--special_token_ids=a,b", f"--output_dir={files['p']('pt_ids')}"),
                    "--special_token_ids=a,b", "integer")
