"""Output paths of the wrong kind (a file where a directory goes, a directory where a file goes) and
a --saved_model that is not one: exit status 2, one `error:` line naming the path, checked before
any work, nothing written."""

import os

import pytest

from tests.reliability import bad_inputs as B


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
  root = str(tmp_path_factory.mktemp("output_paths"))
  os.makedirs(os.path.join(root, "a_dir"))
  return dict(root=root, file=B.write(os.path.join(root, "a_file"), "keep\n"),
              dir=os.path.join(root, "a_dir"), vocab=B.write_vocab(os.path.join(root, "vocab")),
              config=B.write_model_config(os.path.join(root, "model_config.json")))


def _file_kept(paths):
  with open(paths["file"], encoding="utf-8") as f:
    assert f.read() == "keep\n"


def test_create_pretraining_data_output_dir_is_a_file(paths):
  B.user_error_line(B.run_script("create_pretraining_data", f"--output_dir={paths['file']}",
                                 f"--vocab_file={paths['vocab']}"),
                    paths["file"], "expected a directory")
  _file_kept(paths)


def test_learn_vocab_output_dir_is_a_file(paths):
  B.user_error_line(B.run_script("learn_vocab", f"--output_dir={paths['file']}"),
                    paths["file"], "expected a directory")
  _file_kept(paths)


def test_learn_vocab_output_dir_under_a_file(paths):
  below = os.path.join(paths["file"], "vocab")
  B.user_error_line(B.run_script("learn_vocab", f"--output_dir={below}"),
                    below, "is under the file", "expected a directory")


def test_run_finetuning_output_dir_is_a_file(paths):
  data = os.path.join(paths["root"], "sst2")
  B.write(os.path.join(data, "train.tsv"), "sentence\tlabel\nthe film\t0\ngood film\t1\n")
  B.write(os.path.join(data, "dev.tsv"), "sentence\tlabel\nthe film\t0\ngood film\t1\n")
  B.user_error_line(B.run_script("run_finetuning", "--task=glue/sst2", f"--data_dir={data}",
                                 f"--output_dir={paths['file']}", f"--model={paths['config']}",
                                 f"--vocab_file={paths['vocab']}", "--num_epochs=1", "--train_batch_size=2",
                                 "--max_seq_length=32", "--save_model=false"),
                    paths["file"], "expected a directory")
  _file_kept(paths)


def test_convert_checkpoint_output_is_a_file(paths):
  B.user_error_line(B.run_script("convert_checkpoint", "--from=hf", "--to=keras",
                                 f"--init_checkpoint={paths['dir']}", f"--output_dir={paths['file']}"),
                    f"--output_dir={paths['file']}", "expected a directory")
  _file_kept(paths)


def test_train_bpe_output_dir_is_a_file(paths):
  B.user_error_line(B.run_script("train_bpe", f"--output_dir={paths['file']}"),
                    f"--output_dir={paths['file']}", "is a file", "expected a directory")
  _file_kept(paths)


def test_predict_saved_model_dir_that_is_not_one(paths):
  B.user_error_line(B.run_script("predict", f"--saved_model={paths['dir']}", "--text_a=good"),
                    paths["dir"], "not a SavedModel directory")


def test_output_path_checks_in_process(paths):
  from bert_keras.atomic_io import check_output_dir, check_output_file  # pylint: disable=g-import-not-at-top

  check_output_dir(paths["dir"])
  check_output_dir(os.path.join(paths["root"], "new", "deeper"))
  check_output_dir("gs://bucket/out")
  check_output_file(os.path.join(paths["root"], "new", "bpe.model"))
  B.raises(lambda: check_output_file(os.path.join(paths["file"], "bpe.model")),
           "--output_file=", "is under the file", paths["file"])
