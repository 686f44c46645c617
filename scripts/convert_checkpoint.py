r"""Convert a BERT checkpoint between the Google TF1, Hugging Face and Keras formats.

  python scripts/convert_checkpoint.py --from=google --to=keras \
      --init_checkpoint=uncased_L-12_H-768_A-12 --output_dir=out/bert_base_keras
  python scripts/convert_checkpoint.py --from=hf --to=google \
      --init_checkpoint="$(python -c 'from bert_keras import resources; print(resources.minilm_dir())')" \
      --output_dir=out/minilm_google
  python scripts/convert_checkpoint.py --from=keras --to=google --init_checkpoint=out/pretrain \
      --output_dir=out/pretrain_google

A run_pretraining model_dir (out/pretrain above) stands for its export/ (encoder.keras, vocab.txt),
written when the run finishes; a .keras or .weights.h5 file can also be named directly.

--to=keras writes encoder.keras (or pretrainer.keras when the source has MLM/NSP heads) and
model_config.json; --to=google writes bert_config.json + bert_model.ckpt.*. Both copy vocab.txt and
write convert_config.json (the resolved settings and what was loaded). Bad input: one line, exit 2.
"""

from absl import app, flags

from bert_keras.configs.flag_file import HELP, parse_flags_with_config_file
from bert_keras.errors import run_main

FLAGS = flags.FLAGS
flags.DEFINE_string("config_file", None, HELP)
flags.DEFINE_enum("from", None, ["google", "hf", "keras"], "Format of --init_checkpoint.")
flags.DEFINE_enum("to", None, ["keras", "google"], "Format to write into --output_dir.")
flags.DEFINE_string("init_checkpoint", None, "Checkpoint directory, TF checkpoint prefix, .keras or "
                    ".weights.h5 file, or a run_pretraining model_dir (its export/).")
flags.DEFINE_string("output_dir", None, "Output directory (created if needed).")
flags.DEFINE_string("vocab_file", "", "vocab.txt to check against vocab_size and copy "
                    "(default: the one beside --init_checkpoint).")
flags.DEFINE_bool("lower_case", None, "Casing of the tokenizer you will use; warns when it "
                 "disagrees with the checkpoint's (not given = do not check).")
flags.mark_flags_as_required(["from", "to", "init_checkpoint", "output_dir"])


def main(argv):
  del argv
  from bert_keras.interop.convert import convert_checkpoint

  summary = convert_checkpoint(FLAGS["from"].value, FLAGS.to, FLAGS.init_checkpoint,
                               FLAGS.output_dir, tokenizer_lower_case=FLAGS.lower_case,
                               vocab_file=FLAGS.vocab_file or None)
  print(f"wrote {', '.join(summary['outputs'])} ({summary['num_loaded']} tensors; "
        f"{len(summary['warnings'])} warning(s))")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags_with_config_file)
