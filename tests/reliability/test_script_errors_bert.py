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
  B.write(p("unknown_key.json"), json.dumps({"model_preset": "bert_tiny", "num_trian_steps": 5}))
  B.write(p("hf_pickle", "config.json"), "{}")
  B.write(p("hf_pickle", "pytorch_model.bin"), b"\x80\x04\x95cos\nsystem\n.")
  B.write(p("bad.jsonl"), '{"text_a": "fine"}\n{not json\n')
  return dict(root=str(root), p=p, vocab=B.write_vocab(p("vocab")),
              config=B.write_model_config(p("model_config.json")),
              big_vocab_config=B.write_model_config(p("big_vocab.json"), vocab_size=100))


def _finetune(files, task, data, *extra):
  return B.run_script("run_finetuning", f"--task={task}", f"--data_dir={files['p'](data)}",
                      f"--output_dir={files['p']('out', task.replace('/', '_'))}",
                      f"--model_config={files['config']}", f"--vocab_file={files['vocab']}",
                      "--num_epochs=1", "--batch_size=2", "--max_seq_length=32", "--save_model=false",
                      *extra)


def test_run_finetuning_malformed_glue_row(files):
  B.user_error_line(_finetune(files, "glue/mrpc", "mrpc"), "mrpc/train.tsv:4:",
                    "2 tab-separated columns", "need at least 5")


def test_run_finetuning_labels_differ_between_train_and_dev(files):
  B.user_error_line(_finetune(files, "glue/sst2", "sst2"), "labels differ between train ['0']",
                    "['1'] never occur in train")


def test_run_finetuning_vocab_does_not_match_model(files):
  B.user_error_line(_finetune(files, "glue/mrpc", "mrpc_ok",
                              f"--model_config={files['big_vocab_config']}"),
                    files["vocab"], "20 tokens", "vocab_size=100")


def test_run_pretraining_unknown_config_key(files):
  path = files["p"]("unknown_key.json")
  B.user_error_line(B.run_script("run_pretraining", f"--config_json={path}",
                                 f"--model_dir={files['p']('pretrain')}"),
                    path, "unknown training config keys ['num_trian_steps']")


def test_convert_checkpoint_refuses_pickle(files):
  B.user_error_line(B.run_script("convert_checkpoint", "--from=hf", "--to=keras",
                                 f"--input={files['p']('hf_pickle')}",
                                 f"--output={files['p']('converted')}"),
                    "pytorch_model.bin (a pickle)", "never loaded")
  assert not os.path.exists(files["p"]("converted", "encoder.keras"))


def test_export_model_missing_finetune_dir(files):
  missing = files["p"]("no_such_run")
  B.user_error_line(B.run_script("export_model", f"--finetune_dir={missing}",
                                 f"--output_dir={files['p']('export')}"),
                    missing, "no model.keras")


def test_predict_malformed_jsonl(files):
  path = files["p"]("bad.jsonl")
  B.user_error_line(B.run_script("predict", f"--saved_model={files['p']('no_model')}",
                                 f"--input_file={path}"), f"{path}:2: not valid JSON")
