"""Trains GPT-1's BPE vocabulary (SentencePiece BPE) on the embedded real corpora or text files.

  python scripts/train_bpe.py --output=out/bpe.model --vocab_size=8000 \
      --corpora=wikipedia,lee_background [--input_files=a.txt,b.txt]

The paper uses 40,000 merges (vocab_size 40,478 + 3 special tokens) on BooksCorpus; the embedded
corpora support a few thousand pieces. Writes the model and <output>.json with the settings.
"""

from absl import app, flags

from bert_keras.errors import parse_flags, run_main

flags.DEFINE_string("output", None, "Path of the SentencePiece .model file to write.")
flags.DEFINE_integer("vocab_size", 8000, "Pieces in total: specials, characters and merges.")
flags.DEFINE_list("corpora", ["wikipedia", "lee_background"], "Embedded corpora to read.")
flags.DEFINE_list("input_files", [], "Extra plain-text files, one document per line.")
flags.DEFINE_bool("lower_case", True, "Fold case, as GPT-1's text encoder lowercased.")
flags.mark_flag_as_required("output")


def main(argv):
  del argv
  from bert_keras.gpt.gpt_runs import run_train_bpe  # pylint: disable=g-import-not-at-top
  F = flags.FLAGS
  tokenizer = run_train_bpe(F.corpora, F.input_files, F.vocab_size, F.output, F.lower_case)
  print(f"wrote {F.output}: {tokenizer.vocab_size} pieces")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
