"""Trains GPT-1's BPE vocabulary (SentencePiece BPE) on the embedded real corpora or text files.

  python scripts/train_bpe.py --output_dir=out/bpe --vocab_size=8000 \
      --corpora=wikipedia,lee_background [--input_files='a.txt,more/*.txt']

The paper uses 40,000 merges (vocab_size 40,478 + 3 special tokens) on BooksCorpus; the embedded
corpora support a few thousand pieces. Writes <output_dir>/bpe.model and bpe.model.json (the
settings).
"""

import os

from absl import app, flags

from bert_keras.atomic_io import check_output_dir
from bert_keras.configs.flag_file import HELP, parse_flags_with_config_file
from bert_keras.errors import run_main
from bert_keras.input_checks import local_input_files

flags.DEFINE_string("config_file", None, HELP)
flags.DEFINE_string("output_dir", None, "Where bpe.model (SentencePiece) and its settings go.")
flags.DEFINE_integer("vocab_size", 8000, "Pieces in total: specials, characters and merges.")
flags.DEFINE_list("corpora", ["wikipedia", "lee_background"], "Embedded corpora to read.")
flags.DEFINE_string("input_files", "", "Extra plain-text files, one document per line: "
                    "comma-separated paths or globs.")
flags.DEFINE_bool("lower_case", True, "Fold case, as GPT-1's text encoder lowercased.")
flags.mark_flag_as_required("output_dir")


def main(argv):
  del argv
  check_output_dir(flags.FLAGS.output_dir)  # before TensorFlow loads
  from bert_keras.gpt.lm_data import run_train_bpe  # pylint: disable=g-import-not-at-top
  F = flags.FLAGS
  path = os.path.join(F.output_dir, "bpe.model")
  tokenizer = run_train_bpe(F.corpora, local_input_files(F.input_files), F.vocab_size, path,
                            F.lower_case)
  print(f"wrote {path}: {tokenizer.vocab_size} pieces")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags_with_config_file)
