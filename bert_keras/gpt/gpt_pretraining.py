"""GPT-1 pretraining, the LM objective L1 (section 3.1), on the generic `Trainer`: what
scripts/run_pretraining.py runs for a GPT-1 preset (--model=gpt_nano ... gpt1).

The text (--corpora, then --input_files, one document per line) is BPE-encoded with --bpe_model and
cut into contiguous windows (section 4.1). Writes, as BERT's run does, training_config.json,
checkpoints (rerunning resumes), history.jsonl and tensorboard/ into --output_dir; at the end
decoder.keras, bpe.model (what fine-tuning starts from) and metrics.json (the last train row).
"""

from __future__ import annotations

import os

import keras
import tensorflow as tf

from bert_keras.atomic_io import check_output_dir, gfile_write_text, write_file, write_json
from bert_keras.errors import UserError
from bert_keras.gpt import lm_data
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.input_checks import local_input_files, split_patterns
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLanguageModel
from bert_keras.training import distribute, precision
from bert_keras.training.pretrain import build_optimizer
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from bert_keras.configs.training import TrainingConfig

TOKENIZER_FILE = "bpe.model"
DECODER_FILE = "decoder.keras"


class GPTPretrainingTask(PretrainingTask):
  """L1 as the "ltr" objective's sums (position i scores token i+1 among real tokens), on
  {input_ids, input_mask} and the decoder's `lm_logits`; metrics lm_loss, lm_perplexity, lm_accuracy."""

  def __init__(self):
    super().__init__("ltr")

  def model_inputs(self, features):
    return {"input_word_ids": features["input_ids"], "input_mask": features["input_mask"]}

  def loss_sums(self, features, outputs):
    return super().loss_sums(features, {"mlm_logits": outputs["lm_logits"]})

  def metrics(self, sums):
    metrics = super().metrics(sums)
    return {"lm_loss": metrics["lm_loss"], "lm_perplexity": tf.exp(metrics["lm_loss"]),
            "lm_accuracy": metrics["lm_accuracy"]}


def run_gpt_pretraining(config: TrainingConfig) -> dict:
  """Trains (or resumes) GPT-1 per `config`; returns {"train": the last train row}."""
  out, data = config.outputs.output_dir, config.data
  if not out:
    raise UserError("--output_dir is required")
  if not data.bpe_model:
    raise UserError(f"--model={config.model.model} reads text: --bpe_model is required "
                    "(scripts/train_bpe.py writes one)")
  check_output_dir(out)
  tokenizer = GPTTokenizer(model_path=data.bpe_model)
  documents = lm_data.read_texts(split_patterns(data.corpora), local_input_files(data.input_files))
  ids = [[t for s in tokenizer.encode(list(doc)) for t in s] for doc in documents]
  windows = lm_data.contiguous_windows(ids, data.max_seq_length)
  keras.utils.set_random_seed(config.runtime.seed)
  strategy = distribute.get_strategy(config.runtime.distribution_strategy,
                                     tpu=config.runtime.tpu or None,
                                     num_gpus=config.runtime.num_gpus)
  precision.set_precision(config.runtime.mixed_precision)
  with strategy.scope():
    model_config = config.model_config().replace(vocab_size=tokenizer.vocab_size)
    lm = GPTLanguageModel(GPTDecoder.from_model_config(model_config))
    optimizer = build_optimizer(config)
  trainer = Trainer(strategy, lm, optimizer, GPTPretrainingTask(), config,
                    history_path=os.path.join(out, "history.jsonl"))
  trainer.restore()
  chief = distribute.is_chief(strategy)
  if chief:
    os.makedirs(out, exist_ok=True)
    gfile_write_text(os.path.join(out, "training_config.json"), config.to_json() + "\n")
  dataset_fn = lm_data.in_memory_dataset_fn(windows, data.train_batch_size,
                                            config.optimizer.gradient_accumulation_steps,
                                            seed=config.runtime.seed)
  trainer.train(dataset_fn, config.optimizer.num_train_steps)
  trainer.write_history()
  final = [row for row in trainer.full_history() if row.get("split") == "train"][-1]  # also of a resume
  if chief:
    write_file(os.path.join(out, DECODER_FILE), lm.decoder.save, ".keras")
    tokenizer.save_model(os.path.join(out, TOKENIZER_FILE))
    write_json(os.path.join(out, "metrics.json"), final)
  return {"train": final}
