"""The library side of the GPT scripts: train a BPE vocabulary, pretrain GPT-1, fine-tune and export.

Each run writes its resolved config JSON next to its outputs, and every file atomically.
"""

from __future__ import annotations

import json
import os
from typing import Sequence

import keras
import numpy as np
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.gpt import gpt_training, lm_data
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_input_transform import GPTInputTransform
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLanguageModel
from bert_keras.models.gpt_task_model import GPTTaskModel
from bert_keras.tasks import metrics as metrics_lib
from bert_keras.tasks.registry import get_task
from configs.gpt import GPTFinetuningConfig, GPTPretrainingConfig, get_gpt_config
from configs.tasks import TaskConfig

TOKENIZER_FILE = "bpe.model"
DECODER_FILE = "decoder.keras"
# GPT fine-tuning supports the registry's single-text and text-pair classification/regression tasks.
PAIR_LAYOUT = "similarity"


def write_json(path: str, values) -> None:
  tmp = f"{path}.tmp-{os.getpid()}"
  with open(tmp, "w", encoding="utf-8") as f:
    json.dump(values, f, indent=2, sort_keys=True)
  os.replace(tmp, path)


def _read_texts(corpora: Sequence[str], input_files: Sequence[str]) -> list[list[str]]:
  documents = [doc for name in corpora for doc in lm_data.read_corpus(name)]
  for path in input_files:
    if not os.path.exists(path):
      raise UserError(f"{path}: no such input file")
    with open(path, encoding="utf-8") as f:
      documents += [[line.strip()] for line in f if line.strip()]
  if not documents:
    raise UserError("no corpus given: name --corpora and/or --input_files")
  return documents


def run_train_bpe(corpora: Sequence[str], input_files: Sequence[str], vocab_size: int,
                  output_path: str, lower_case: bool = True) -> GPTTokenizer:
  """Trains the BPE model on real corpora and writes it (+ `<output>.json` with the settings)."""
  documents = _read_texts(corpora, input_files)
  proto = train_bpe_model([" ".join(d) for d in documents], vocab_size, lower_case=lower_case)
  tokenizer = GPTTokenizer(model_proto=proto)
  os.makedirs(os.path.dirname(os.path.abspath(output_path)), exist_ok=True)
  tokenizer.save_model(output_path)
  write_json(output_path + ".json", {"corpora": list(corpora), "input_files": list(input_files),
                                     "vocab_size": vocab_size, "lower_case": lower_case,
                                     "num_documents": len(documents)})
  return tokenizer


def run_gpt_pretraining(model_preset: str, bpe_model: str, corpora: Sequence[str],
                        input_files: Sequence[str], config: GPTPretrainingConfig,
                        output_dir: str) -> dict:
  """Pretrains GPT-1 (L1) with the generic Trainer; writes decoder.keras, bpe.model, history."""
  tokenizer = GPTTokenizer(model_path=bpe_model)
  model_config = get_gpt_config(model_preset, vocab_size=tokenizer.vocab_size)
  if config.seq_length > model_config.max_position_embeddings:
    raise UserError(f"seq_length={config.seq_length} > max_position_embeddings="
                    f"{model_config.max_position_embeddings} of preset {model_preset!r}")
  os.makedirs(output_dir, exist_ok=True)
  write_json(os.path.join(output_dir, "config.json"),
             {"model": model_config.to_dict(), "pretraining": config.to_dict(),
              "corpora": list(corpora), "input_files": list(input_files), "bpe_model": bpe_model})
  documents = _read_texts(corpora, input_files)
  ids = [[t for s in tokenizer.encode(list(doc)) for t in s] for doc in documents]
  windows = lm_data.contiguous_windows(ids, config.seq_length)
  keras.utils.set_random_seed(config.seed)
  lm = GPTLanguageModel(GPTDecoder.from_model_config(model_config))
  trainer = gpt_training.pretrain(lm, windows, config, os.path.join(output_dir, "checkpoints"))
  trainer.write_history(os.path.join(output_dir, "history.jsonl"))
  tmp = os.path.join(output_dir, f".{DECODER_FILE}.tmp-{os.getpid()}.keras")
  lm.decoder.save(tmp)
  os.replace(tmp, os.path.join(output_dir, DECODER_FILE))
  tokenizer.save_model(os.path.join(output_dir, TOKENIZER_FILE))
  final = [h for h in trainer.history if h["split"] == "train"][-1]
  write_json(os.path.join(output_dir, "metrics.json"), final)
  return final


def _features(task, examples, tokenizer: GPTTokenizer, transform: GPTInputTransform) -> dict:
  a = tf.ragged.constant(tokenizer.encode([e.text_a for e in examples]), tf.int32, ragged_rank=1)
  if task.is_pair:
    b = tf.ragged.constant(tokenizer.encode([e.text_b or "" for e in examples]), tf.int32,
                           ragged_rank=1)
    packed = transform.similarity(a, b) if PAIR_LAYOUT == "similarity" else transform.entailment(a, b)
  else:
    packed = transform.classification(a)
  features = {k: v.numpy() for k, v in packed.items()}
  if task.is_regression:
    features["labels"] = np.array([float(e.label) for e in examples], np.float32)
  else:
    features["labels"] = np.array([task.label_names.index(e.label) for e in examples], np.int32)
  return features


def run_gpt_finetuning(task_name: str, pretrained_dir: str | None, config: GPTFinetuningConfig,
                       output_dir: str, data_dir: str = "", model_preset: str = "gpt_tiny",
                       bpe_model: str | None = None) -> dict:
  """Fine-tunes GPT-1 on a registry task (L3 = L2 + lm_coef * L1), scores dev, and exports a
  SavedModel that takes raw strings. Without `pretrained_dir` the decoder is random (the
  "w/o pre-training" ablation) and `bpe_model` must be given."""
  task = get_task(TaskConfig(task=task_name, max_seq_length=config.seq_length))
  if getattr(task, "is_pair", None) is None:
    raise UserError(f"task {task_name!r} is not a classification/regression task; GPT fine-tuning "
                    "supports single texts and text pairs")
  if pretrained_dir:
    tokenizer = GPTTokenizer(model_path=os.path.join(pretrained_dir, TOKENIZER_FILE))
    decoder_path = os.path.join(pretrained_dir, DECODER_FILE)
    if not os.path.exists(decoder_path):
      raise UserError(f"{decoder_path}: no pretrained decoder (run scripts/run_gpt_pretraining.py)")
    decoder = keras.saving.load_model(decoder_path)
  else:
    if not bpe_model:
      raise UserError("without --pretrained_dir, --bpe_model is required")
    tokenizer = GPTTokenizer(model_path=bpe_model)
    keras.utils.set_random_seed(config.seed)
    decoder = GPTDecoder.from_model_config(get_gpt_config(model_preset,
                                                          vocab_size=tokenizer.vocab_size))
  os.makedirs(output_dir, exist_ok=True)
  write_json(os.path.join(output_dir, "config.json"),
             {"task": task_name, "finetuning": config.to_dict(), "pretrained_dir": pretrained_dir,
              "model": decoder.model_config.to_dict()})
  transform = GPTInputTransform(config.seq_length, tokenizer.start_id, tokenizer.delimiter_id,
                                tokenizer.extract_id, tokenizer.pad_id)
  train = _features(task, task.read_examples(data_dir, "train"), tokenizer, transform)
  dev = _features(task, task.read_examples(data_dir, "dev"), tokenizer, transform)
  task_type = "similarity" if task.is_pair else "classification"
  model = GPTTaskModel(decoder, task_type,
                       num_outputs=1 if task.is_regression else len(task.label_names),
                       classifier_dropout=config.classifier_dropout,
                       with_lm_logits=config.lm_coef > 0)
  gpt_training.finetune(model, train, config, os.path.join(output_dir, "checkpoints"))
  logits = gpt_training.predict(model, {k: v for k, v in dev.items() if k != "labels"})
  if task.is_regression:
    scores = {m: metrics_lib.REGRESSION_METRICS[m](dev["labels"], logits[:, 0])
              for m in task.metric_names}
  else:
    scores = {"accuracy": metrics_lib.accuracy(dev["labels"], logits.argmax(-1))}
  write_json(os.path.join(output_dir, "metrics.json"), scores)
  export_text_model(model, tokenizer, transform, task.is_pair, os.path.join(output_dir, "export"))
  return scores


def export_text_model(model: GPTTaskModel, tokenizer: GPTTokenizer, transform: GPTInputTransform,
                      is_pair: bool, export_dir: str) -> None:
  """A SavedModel whose `serving_default` takes raw strings (text_a[, text_b]) and returns logits:
  BPE tokenization and the traversal-style transform run in-graph."""
  serving = GPTTaskModel(model.decoder, model.task_type, model.num_outputs, 0.0,
                         with_lm_logits=False)
  serving.get_layer("classifier").set_weights(model.get_layer("classifier").get_weights())
  module = tf.Module()
  module.model, module.tokenizer, module.transform = serving, tokenizer, transform

  def run(packed):
    return {"logits": serving(packed, training=False)["logits"]}

  if is_pair:
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text_a"),
                                  tf.TensorSpec([None], tf.string, name="text_b")])
    def serve(text_a, text_b):
      return run(transform.similarity(tokenizer.tokenize(text_a), tokenizer.tokenize(text_b)))
  else:
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(text):
      return run(transform.classification(tokenizer.tokenize(text)))
  module.serve = serve
  tmp = f"{export_dir}.tmp-{os.getpid()}"
  tf.saved_model.save(module, tmp, signatures={"serving_default": serve})
  if os.path.exists(export_dir):
    import shutil  # pylint: disable=g-import-not-at-top
    shutil.rmtree(export_dir)
  os.replace(tmp, export_dir)
