"""Learns a WordPiece vocab.txt from the pretraining corpora with an Apache Beam pipeline.

  python scripts/learn_vocab.py --output_dir=out/vocab --vocab_size=30522            # embedded dump
  python scripts/learn_vocab.py --input_files='corpus/*.txt' --input_format=bert_text \
      --lower_case=false --output_dir=out/vocab_cased [--runner=DataflowRunner ...]

Writes <output_dir>/vocab.txt ([PAD], [unused*], [UNK], [CLS], [SEP], [MASK], pieces) and
learn_vocab_config.json beside it. --vocab_size is the learner's target: the file holds about that
many tokens. Its real count (learn_vocab_config.json's vocab_tokens, vocab.txt's line count) is the
model's vocab_size: run_pretraining.py --model_overrides='{"vocab_size": N}'. --config_file takes a
JSON or YAML file of these flags by name, such as learn_vocab_config.json; flags given override it.
"""

from absl import app

from bert_keras.errors import pass_flags_to_main, run_main


def main(argv):
  # pylint: disable=g-import-not-at-top
  from bert_keras.data.beam_args import parse_vocab_args
  parse_vocab_args(argv[1:])  # --help and bad flags answer before Beam is imported
  from bert_keras.data.wordpiece_vocab_pipeline import run
  print(run(argv[1:]))


if __name__ == "__main__":
  # Flags are parsed by argparse in parse_args so that Beam's own options pass through untouched.
  app.run(run_main(main), flags_parser=pass_flags_to_main)
