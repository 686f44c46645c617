"""train_bpe / GPT pretraining input files that are not UTF-8: one error naming file:line, exit 2."""

import json
import os

import pytest

from bert_keras.errors import UserError
from bert_keras.gpt.lm_data import run_train_bpe
from tests.reliability import bad_inputs as B


def _latin1_file(directory) -> str:
  path = os.path.join(str(directory), "latin1.txt")
  with open(path, "wb") as f:
    f.write(b"a first line\n\nthe caf\xe9 was good\n")
  return path


def test_train_bpe_names_the_undecodable_line(tmp_path):
  path = _latin1_file(tmp_path)
  with pytest.raises(UserError, match=f"^{path}:3: not valid UTF-8 "):
    run_train_bpe([], [path], 20, str(tmp_path / "bpe.model"))
  assert not os.path.exists(tmp_path / "bpe.model")


def test_train_bpe_learns_from_the_nonblank_lines(tmp_path):
  path = os.path.join(str(tmp_path), "ok.txt")
  with open(path, "w", encoding="utf-8") as f:
    f.write("  one  \n\n\ttwo\r\n")
  tokenizer = run_train_bpe([], [path], 20, str(tmp_path / "bpe.model"))
  with open(tmp_path / "bpe.model.json", encoding="utf-8") as f:
    assert json.load(f)["num_documents"] == 2
  assert tokenizer.decode(tokenizer.encode(["two one"])[0]) == "two one"


def test_train_bpe_script_exits_2_with_one_line(tmp_path):
  path = _latin1_file(tmp_path)
  B.user_error_line(B.run_script("train_bpe", f"--output_dir={tmp_path}/bpe", "--corpora=",
                                 f"--input_files={path}"), f"{path}:3", "not valid UTF-8")
