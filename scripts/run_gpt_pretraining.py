"""Pretrains GPT-1 with the LM objective L1 (Radford et al., 2018, section 3.1) on real corpora.

  python scripts/run_gpt_pretraining.py --bpe_model=out/bpe.model --output_dir=out/gpt \
      --model=gpt_tiny --num_train_steps=1000 --max_seq_length=128 --train_batch_size=32

Defaults are the paper's schedule (Adam(W), 2,000 warmup steps, cosine decay, max lr 2.5e-4).
Logs the progress line every 100 steps, as run_pretraining.py does. Writes config.json,
history.jsonl, metrics.json, decoder.keras, bpe.model, checkpoints/ and tensorboard/ (train/loss,
train/learning_rate, train/lm_accuracy, ...) into --output_dir.
"""

from absl import app, flags

from bert_keras.errors import parse_flags, run_main
from bert_keras.input_checks import local_input_files
from bert_keras.configs.gpt import GPTPretrainingConfig

_DEFAULTS = GPTPretrainingConfig()
flags.DEFINE_string("bpe_model", None, "SentencePiece BPE model from scripts/train_bpe.py.")
flags.DEFINE_string("output_dir", None, "Where the model and logs go.")
flags.DEFINE_string("model", "gpt_tiny", "GPT preset (bert_keras/configs/gpt.py): gpt_nano ... gpt1.")
flags.DEFINE_list("corpora", ["wikipedia", "lee_background"], "Embedded corpora.")
flags.DEFINE_string("input_files", "", "Extra plain-text files, one document per line: "
                    "comma-separated paths or globs.")
flags.DEFINE_float("learning_rate", _DEFAULTS.learning_rate, "Peak learning rate.")
flags.DEFINE_integer("num_train_steps", _DEFAULTS.num_train_steps, "Training steps.")
flags.DEFINE_integer("num_warmup_steps", _DEFAULTS.num_warmup_steps, "Linear warmup steps.")
flags.DEFINE_enum("decay", _DEFAULTS.decay, ["cosine", "linear", "constant"], "Decay after warmup.")
flags.DEFINE_integer("train_batch_size", _DEFAULTS.train_batch_size, "Sequences per step.")
flags.DEFINE_integer("max_seq_length", _DEFAULTS.max_seq_length, "Tokens per contiguous window.")
flags.DEFINE_integer("seed", 0, "Random seed.")
flags.mark_flags_as_required(["bpe_model", "output_dir"])


def main(argv):
  del argv
  F = flags.FLAGS
  config = GPTPretrainingConfig(learning_rate=F.learning_rate, num_train_steps=F.num_train_steps,
                                num_warmup_steps=F.num_warmup_steps, decay=F.decay,
                                train_batch_size=F.train_batch_size,
                                max_seq_length=F.max_seq_length, seed=F.seed)
  # After the flags and config are checked: TensorFlow takes seconds to import.
  from bert_keras.gpt.gpt_runs import run_gpt_pretraining  # pylint: disable=g-import-not-at-top
  metrics = run_gpt_pretraining(F.model, F.bpe_model, F.corpora, local_input_files(F.input_files), config,
                                F.output_dir)
  print(" ".join(f"{k}={v:.4g}" for k, v in sorted(metrics.items()) if isinstance(v, float)))


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
