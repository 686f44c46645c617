r"""Convert a BERT checkpoint between the Google TF1, Hugging Face and Keras formats.

  python scripts/convert_checkpoint.py --from=google --to=keras \
      --input=uncased_L-12_H-768_A-12 --output=out/bert_base_keras
  python scripts/convert_checkpoint.py --from=hf --to=google \
      --input="$(python -c 'from bert_keras import resources; print(resources.minilm_dir())')" \
      --output=out/minilm_google
  python scripts/convert_checkpoint.py --from=keras --to=google --input=out/pretrain \
      --output=out/pretrain_google

A run_pretraining model_dir (out/pretrain above) stands for its export/ (encoder.keras, vocab.txt),
written when the run finishes; a .keras or .weights.h5 file can also be named directly.

--to=keras writes encoder.keras (or pretrainer.keras when the source has MLM/NSP heads) and
model_config.json; --to=google writes bert_config.json + bert_model.ckpt.*. Both copy vocab.txt and
write convert_config.json (the resolved settings and what was loaded). Bad input: one line, exit 2.
"""

from absl import app, flags

from bert_keras.errors import parse_flags, run_main

FLAGS = flags.FLAGS
flags.DEFINE_enum("from", None, ["google", "hf", "keras"], "Format of --input.")
flags.DEFINE_enum("to", None, ["keras", "google"], "Format to write into --output.")
flags.DEFINE_string("input", None, "Checkpoint directory, TF checkpoint prefix, .keras or "
                    ".weights.h5 file, or a run_pretraining model_dir (its export/).")
flags.DEFINE_string("output", None, "Output directory (created if needed).")
flags.DEFINE_string("vocab_file", "", "vocab.txt to check against vocab_size and copy "
                    "(default: the one beside --input).")
flags.DEFINE_enum("lower_case", "auto", ["auto", "true", "false"],
                  "Casing of the tokenizer you will use; warns when it disagrees with the "
                  "checkpoint's (auto = do not check).")
flags.mark_flags_as_required(["from", "to", "input", "output"])


def main(argv):
  del argv
  from bert_keras.interop.convert import convert_checkpoint

  lower_case = {"auto": None, "true": True, "false": False}[FLAGS.lower_case]
  summary = convert_checkpoint(FLAGS["from"].value, FLAGS.to, FLAGS.input, FLAGS.output,
                               tokenizer_lower_case=lower_case,
                               vocab_file=FLAGS.vocab_file or None)
  print(f"wrote {', '.join(summary['outputs'])} ({summary['num_loaded']} tensors; "
        f"{len(summary['warnings'])} warning(s))")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
