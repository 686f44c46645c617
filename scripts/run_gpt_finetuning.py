"""Fine-tunes GPT-1 on a registered task with L3 = L2 + lambda * L1 (section 3.2) and exports it.

  python scripts/run_gpt_finetuning.py --task=gpt/polarity --init_checkpoint=out/gpt \
      --output_dir=out/gpt_polarity [--lm_coef=0.5] [--max_seq_length=64]

--lm_coef=0 is the "without auxiliary LM" ablation; no --init_checkpoint (with --bpe_model and
--model) is "without pre-training". The task resolves through the task registry (gpt/<task>; its
layout is classification, entailment, similarity or multiple choice). Prints the progress line
while it trains and evaluates, as run_finetuning.py does. Writes config.json, metrics.json,
predictions_<split>.json, model.keras, bpe.model, task_info.json, export/ (a SavedModel that
takes raw strings), checkpoints/ and tensorboard/ (train/loss, train/learning_rate, the L2 and L1
losses, dev/<metric>) into --output_dir.
"""

from absl import app, flags

from bert_keras.errors import parse_flags, run_main
from bert_keras.configs.gpt import GPTFinetuningConfig

_DEFAULTS = GPTFinetuningConfig()
flags.DEFINE_string("task", "gpt/polarity", "Registered GPT task (bert_keras/gpt/gpt_task.py): "
                    "gpt/polarity, gpt/lee_similarity, gpt/swag, gpt/glue/rte, ... (the bare "
                    "BERT task name works too).")
flags.DEFINE_string("data_dir", "", "Task data; empty uses the embedded sets.")
flags.DEFINE_string("init_checkpoint", None, "Output directory of scripts/run_gpt_pretraining.py.")
flags.DEFINE_string("bpe_model", None, "BPE model, when starting from a random decoder.")
flags.DEFINE_string("model", "gpt_tiny", "GPT preset, when starting from a random decoder.")
flags.DEFINE_string("output_dir", None, "Where the model, metrics and export go.")
flags.DEFINE_float("learning_rate", _DEFAULTS.learning_rate, "Peak learning rate.")
flags.DEFINE_integer("train_batch_size", _DEFAULTS.train_batch_size, "Examples per step.")
flags.DEFINE_float("num_epochs", _DEFAULTS.num_epochs, "Epochs.")
flags.DEFINE_float("lm_coef", _DEFAULTS.lm_coef, "lambda of the auxiliary LM loss (0 = none).")
flags.DEFINE_integer("max_seq_length", 128, "Tokens per sequence.")
flags.DEFINE_integer("seed", 0, "Random seed.")
flags.mark_flag_as_required("output_dir")


def main(argv):
  del argv
  F = flags.FLAGS
  config = GPTFinetuningConfig(learning_rate=F.learning_rate, train_batch_size=F.train_batch_size,
                               num_epochs=F.num_epochs, lm_coef=F.lm_coef,
                               max_seq_length=F.max_seq_length, seed=F.seed)
  # After the flags and config are checked: TensorFlow takes seconds to import.
  from bert_keras.gpt.gpt_runs import run_gpt_finetuning  # pylint: disable=g-import-not-at-top
  scores = run_gpt_finetuning(F.task, F.init_checkpoint, config, F.output_dir, F.data_dir,
                              F.model, F.bpe_model)
  print(" ".join(f"{k}={v:.4f}" for k, v in sorted(scores.items())))


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
