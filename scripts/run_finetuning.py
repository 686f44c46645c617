"""Fine-tune a BERT encoder on a registered task, evaluate on dev, write predictions and metrics;
or evaluate / predict with a fine-tuned output directory, without training.

  python scripts/run_finetuning.py --task=polarity --init_checkpoint=<minilm dir> \
      --output_dir=out/polarity
  python scripts/run_finetuning.py --task=glue/mrpc --data_dir=glue_data/MRPC \
      --init_checkpoint=uncased_L-12_H-768_A-12 --output_dir=out/mrpc
  python scripts/run_finetuning.py --mode=evaluate --finetuned_dir=out/mrpc \
      --data_dir=glue_data/MRPC --output_dir=out/mrpc_dev
  python scripts/run_finetuning.py --mode=predict --finetuned_dir=out/mrpc \
      --data_dir=glue_data/MRPC --output_dir=out/mrpc_test      # writes MRPC.tsv for the server
  python scripts/run_finetuning.py --task=gpt/polarity --init_checkpoint=out/gpt \
      --output_dir=out/gpt_polarity [--lm_coef=0.5]

GPT-1 is a model family of the same run: a gpt/<task> fine-tunes the decoder of a GPT-1
pretraining run (run_pretraining.py --model=gpt_*; or a random one of --model=gpt_* with
--vocab_file=<bpe.model>, "without pre-training") with L2 + lm_coef * L1 (section 3.2).

--data_dir: '' means the task's embedded data (polarity, lee_similarity) and is an error for every
other task; config.json records the folder read. Outputs: metrics.json, config.json and
predictions_<split>.json (other formats of them as predictions_<split>.<what>.<ext>); predict mode
adds the official submission files (GLUE <TASK>.tsv; SQuAD predictions.json, null_odds.json).
SQuAD training answers whose text is not at their answer_start are skipped and counted in
metrics.json; a file with more than 1% of them is refused.

Defaults are the task preset's (bert_keras/configs/tasks.py: the paper's batch 32, 3 epochs, lr 2e-5..5e-5,
10% warmup, dropout 0.1; the small embedded sets and SQuAD/SWAG use their own batch, epochs and lr);
any flag given overrides the preset. --config_file (JSON or YAML) holds {"task": {...}, "run": {...}}
(bert_keras/configs/finetuning.py FinetuningConfig), as the config.json a training run writes: it
replaces the preset, and the flags given override its values. `--help` lists the registered
tasks under `--task`, and so does the error when `--task` is missing.
"""

from absl import app, flags

from bert_keras.errors import parse_flags, run_main
from bert_keras.tasks.data_files import data_files_help
from bert_keras.configs.tasks import TASK_PRESETS
from bert_keras.configs.training import FINETUNE_DISTRIBUTIONS

FLAGS = flags.FLAGS
_TASKS = ", ".join(sorted(TASK_PRESETS))
flags.DEFINE_string("config_file", None, "train: start from this file, JSON or YAML, of "
                    '{"task": {...}, "run": {...}} (a run\'s config.json) instead of the --task '
                    "preset; flags given override its values.")
flags.DEFINE_enum("mode", "train", ["train", "evaluate", "predict"],
                  "train: fine-tune, then evaluate on dev. evaluate: score --finetuned_dir on "
                  "labelled --split(s) (default dev). predict: predict --split(s) (default the "
                  "unlabeled test files) into the official submission files.")
flags.DEFINE_string("finetuned_dir", "", "evaluate/predict: a run_finetuning output directory "
                    "(model.keras, config.json, task_info.json, vocab.txt).")
flags.DEFINE_list("split", [], "evaluate/predict: the splits to read (default: dev for evaluate, "
                  "the task's test files for predict; SQuAD's test set is hidden: dev).")
flags.DEFINE_string("task", None, f"Registered task (its preset gives the defaults): {_TASKS}. "
                    "evaluate/predict: the fine-tuned run's.")
flags.DEFINE_string("data_dir", "", "Folder with the task's official files; '' = the embedded "
                    "data of polarity and lee_similarity (required for every other task); "
                    "'tfds:' or 'tfds:<dir>' for GLUE from tensorflow-datasets. The files per "
                    "task:\n" + data_files_help())
flags.DEFINE_string("init_checkpoint", "", "Pretrained checkpoint (Google TF1 dir/prefix, Hugging "
                    "Face dir, .keras or .weights.h5, a run_pretraining model_dir). Empty = "
                    "random initialisation.")
flags.DEFINE_string("model", "", "For random init: model preset, ModelConfig JSON or a "
                    "checkpoint whose config (not weights) to use.")
flags.DEFINE_string("vocab_file", "", "WordPiece vocab.txt (default: the checkpoint's).")
flags.DEFINE_bool("lower_case", None, "Tokenizer casing; not given = the checkpoint's.")
flags.DEFINE_string("output_dir", None, "Where metrics, predictions and the model go.")
flags.DEFINE_float("learning_rate", None, "Peak Adam learning rate (paper: 5e-5, 4e-5, 3e-5, 2e-5).")
flags.DEFINE_integer("train_batch_size", None, "Training batch size (paper: 32).")
flags.DEFINE_float("num_epochs", None, "Training epochs (paper: 3).")
flags.DEFINE_float("warmup_proportion", None, "Fraction of steps of linear warmup (paper: 0.1).")
flags.DEFINE_float("dropout_rate", None, "Dropout in encoder and head (paper: 0.1).")
flags.DEFINE_integer("max_seq_length", None, "Packed sequence length.")
flags.DEFINE_integer("doc_stride", None, "SQuAD: stride between passage windows.")
flags.DEFINE_integer("max_query_length", None, "SQuAD: question tokens kept.")
flags.DEFINE_integer("n_best_size", None, "SQuAD: candidates per start/end.")
flags.DEFINE_integer("max_answer_length", None, "SQuAD: longest answer in tokens.")
flags.DEFINE_enum("tagging_scheme", None, ["iob1", "iob2"], "CoNLL: scheme of the input files.")
flags.DEFINE_enum("approach", None, ["fine_tuning", "feature_based"],
                  "Fine-tune all weights, or a BiLSTM over frozen features (section 5.3).")
flags.DEFINE_list("feature_layers", None, "Feature-based: encoder layer indices to concatenate.")
flags.DEFINE_integer("lstm_units", None, "Feature-based: BiLSTM units per direction.")
flags.DEFINE_float("lm_coef", None, "gpt/<task>: lambda of the auxiliary LM loss, L2 + lambda * L1 "
                   "(GPT-1: 0.5; 0 = none).")
flags.DEFINE_integer("seed", None, "Random seed.")
flags.DEFINE_integer("max_train_examples", 0, "Use only the first N training examples (0 = all).",
                     lower_bound=0)
flags.DEFINE_enum("distribution_strategy", "default", list(FINETUNE_DISTRIBUTIONS),
                  "tf.distribute strategy.")
flags.DEFINE_enum("mixed_precision", "float32", ["float32", "mixed_float16", "mixed_bfloat16"],
                  "Numeric precision policy.")
flags.DEFINE_bool("save_model", True, "Write model.keras.")
flags.DEFINE_string("length_buckets", "auto", "The lengths training, evaluation and prediction "
                    "batches are padded to, each batch holding examples of similar length (the "
                    "same metrics and predictions as fixed padding): auto = 16, 24, 32, 48, 64, "
                    "... max_seq_length; fixed = every batch at max_seq_length (one shape, for "
                    "TPUs); or ascending lengths, e.g. 16,32,64 (fewer shapes, one XLA program "
                    "per length with jit_compile, more padding). The same values as "
                    "export_model.py's.")
flags.mark_flags_as_required(["output_dir"])
# A missing --task names the choices (absl's required-flag message would only say it needs a value).
flags.register_multi_flags_validator(
    ["task", "mode", "config_file"],
    lambda f: f["task"] is not None or f["config_file"] or f["mode"] != "train",
    message=f"--task is required; registered tasks: {_TASKS}")
flags.register_multi_flags_validator(
    ["finetuned_dir", "mode"], lambda f: bool(f["finetuned_dir"]) == (f["mode"] != "train"),
    message="--finetuned_dir is required with --mode=evaluate or predict, and only there")

_OVERRIDES = ("learning_rate", "train_batch_size", "num_epochs", "warmup_proportion",
              "dropout_rate", "max_seq_length", "doc_stride", "max_query_length", "n_best_size",
              "max_answer_length", "tagging_scheme", "approach", "feature_layers", "lstm_units",
              "lm_coef", "seed")


def length_buckets() -> str:
  """--length_buckets, normalized (UserError naming a bad value)."""
  from bert_keras.errors import UserError
  from bert_keras.text.length_buckets import normalize_spec
  try:
    return normalize_spec(FLAGS.length_buckets)
  except ValueError as e:
    raise UserError(f"--{e}") from None


def config_from_flags():
  """(TaskConfig, RunConfig) of a training run: the --task preset or the --config_file, then the
  flags given on the command line."""
  from bert_keras.configs.finetuning import FinetuningConfig, RunConfig
  from bert_keras.configs.tasks import get_task_config

  task = {name: FLAGS[name].value for name in _OVERRIDES + ("task",) if FLAGS[name].present}
  run = {name: length_buckets() if name == "length_buckets" else FLAGS[name].value
         for name in RunConfig.field_names() if FLAGS[name].present or not FLAGS.config_file}
  if not FLAGS.config_file:
    return get_task_config(task.pop("task"), **task), RunConfig(**run)
  given = {key: value for key, value in (("task", task), ("run", run)) if value}
  config = FinetuningConfig.from_file(FLAGS.config_file, **given)
  return config.task, config.run


def main(argv):
  del argv
  if FLAGS.mode != "train":
    return evaluate_or_predict()
  from bert_keras.tasks.finetuning_checks import check_training_command

  task_config, run = config_from_flags()
  check_training_command(task_config.task, run)  # before TensorFlow loads: a wrong path fails fast
  from bert_keras.tasks.finetuning import run_finetuning
  results = run_finetuning(task_config, run)
  print({k: v for k, v in results.items() if isinstance(v, dict)})


def evaluate_or_predict():
  from bert_keras.errors import UserError
  from bert_keras.tasks.finetuning_checks import check_reuse_command

  training_only = _OVERRIDES + ("init_checkpoint", "model", "vocab_file", "lower_case",
                                "max_train_examples", "save_model", "distribution_strategy",
                                "mixed_precision", "config_file")
  given = [f"--{name}" for name in training_only if FLAGS[name].present]
  if given:
    raise UserError(f"{', '.join(given)}: training settings; --mode={FLAGS.mode} uses those of "
                    f"--finetuned_dir={FLAGS.finetuned_dir}")
  # Before TensorFlow loads: a wrong path fails fast.
  check_reuse_command(FLAGS.finetuned_dir, FLAGS.output_dir, FLAGS.data_dir)
  from bert_keras.tasks import finetuned_model
  if FLAGS.task:
    task = finetuned_model.FinetunedModel(FLAGS.finetuned_dir).task
    if FLAGS.task not in (task.name, task.run_name()):
      raise UserError(f"--task={FLAGS.task}, but --finetuned_dir={FLAGS.finetuned_dir} was "
                      f"fine-tuned on {task.run_name()}")
  run = (finetuned_model.run_evaluation if FLAGS.mode == "evaluate"
         else finetuned_model.run_prediction)
  result = run(FLAGS.finetuned_dir, FLAGS.output_dir, data_dir=FLAGS.data_dir, splits=FLAGS.split,
               length_buckets=length_buckets())
  print(result if FLAGS.mode == "predict" else
        {k: v for k, v in result.items() if isinstance(v, dict)})


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
