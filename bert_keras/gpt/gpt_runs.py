"""The library side of the GPT scripts: train a BPE vocabulary, pretrain GPT-1, fine-tune and export.

Each run writes its resolved config JSON next to its outputs, and every file atomically. Progress
and TensorBoard events (<output_dir>/tensorboard) as BERT's: pretraining logs the line every 100
steps, fine-tuning prints it while it trains and evaluates, and adds <split>/<metric> to the events.
"""

from __future__ import annotations

import json
import os
from typing import Sequence

import keras
import tensorflow as tf

from bert_keras import keras_classes
from bert_keras.atomic_io import check_output_file, staged_dir, write_json
from bert_keras.errors import UserError
from bert_keras.export.export_task_model import write_extra_files
from bert_keras.export.serving_module import ServingCall
from bert_keras.json_io import read_json_file
from bert_keras.gpt import gpt_training, lm_data
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_task import GPTTask, gpt_task_name
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLanguageModel
from bert_keras.models.gpt_task_model import GPTTaskModel
from bert_keras.tasks.readers import read_lines
from bert_keras.tasks.registry import get_task, task_names
from bert_keras.configs.gpt import GPTFinetuningConfig, GPTPretrainingConfig, get_gpt_config
from bert_keras.configs.tasks import TaskConfig

TOKENIZER_FILE = "bpe.model"
DECODER_FILE = "decoder.keras"
TASK_MODEL_FILE = "model.keras"


def _read_texts(corpora: Sequence[str], input_files: Sequence[str]) -> list[list[str]]:
  documents = [doc for name in corpora for doc in lm_data.read_corpus(name)]
  for path in input_files:
    if not os.path.exists(path):
      raise UserError(f"{path}: no such input file")
    # read_lines: a line that is not UTF-8 is one UserError naming file:line, not a traceback.
    documents += [[line.strip()] for _, line in read_lines(path, "UTF-8") if line.strip()]
  if not documents:
    raise UserError("no corpus given: name --corpora and/or --input_files")
  return documents


def run_train_bpe(corpora: Sequence[str], input_files: Sequence[str], vocab_size: int,
                  output_path: str, lower_case: bool = True) -> GPTTokenizer:
  """Trains the BPE model on real corpora and writes it (+ `<output>.json` with the settings)."""
  check_output_file(output_path)
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
  """Pretrains GPT-1 (L1) with the generic Trainer; writes decoder.keras, bpe.model, history,
  checkpoints/ and tensorboard/."""
  tokenizer = GPTTokenizer(model_path=bpe_model)
  model_config = get_gpt_config(model_preset, vocab_size=tokenizer.vocab_size)
  if config.max_seq_length > model_config.max_position_embeddings:
    raise UserError(f"max_seq_length={config.max_seq_length} > max_position_embeddings="
                    f"{model_config.max_position_embeddings} of preset {model_preset!r}")
  os.makedirs(output_dir, exist_ok=True)
  write_json(os.path.join(output_dir, "config.json"),
             {"model": model_config.to_dict(), "pretraining": config.to_dict(),
              "corpora": list(corpora), "input_files": list(input_files), "bpe_model": bpe_model})
  documents = _read_texts(corpora, input_files)
  ids = [[t for s in tokenizer.encode(list(doc)) for t in s] for doc in documents]
  windows = lm_data.contiguous_windows(ids, config.max_seq_length)
  keras.utils.set_random_seed(config.seed)
  lm = GPTLanguageModel(GPTDecoder.from_model_config(model_config))
  trainer = gpt_training.pretrain(lm, windows, config, output_dir)
  trainer.write_history(os.path.join(output_dir, "history.jsonl"))
  tmp = os.path.join(output_dir, f".{DECODER_FILE}.tmp-{os.getpid()}.keras")
  lm.decoder.save(tmp)
  os.replace(tmp, os.path.join(output_dir, DECODER_FILE))
  tokenizer.save_model(os.path.join(output_dir, TOKENIZER_FILE))
  final = [h for h in trainer.history if h["split"] == "train"][-1]
  write_json(os.path.join(output_dir, "metrics.json"), final)
  return final


def _split_scores(task, model, tokenizer, eval_examples: dict, output_dir: str, trainer) -> dict:
  """The task's official metrics per eval split (flat keys for one split, `split/metric` for more),
  with per-example predictions written next to them and `split/metric` in the trainer's events."""
  scores = {}
  step = int(trainer.global_step.numpy())
  for split, examples in eval_examples.items():
    features = task.make_features(examples, tokenizer, training=False)
    logits = gpt_training.predict(model, features.inputs, label=f"evaluate {split}")
    predictions = task.postprocess(examples, features, {"logits": logits})
    task.write_predictions(predictions, os.path.join(output_dir, f"predictions_{split}"))
    metrics = task.evaluate(examples, predictions)
    trainer.summaries.write(step, {f"{split}/{k}": float(v) for k, v in metrics.items()})
    prefix = "" if len(eval_examples) == 1 else f"{split}/"
    scores.update({f"{prefix}{k}": float(v) for k, v in metrics.items()})
  trainer.summaries.close()
  return scores


def run_gpt_finetuning(task_name: str, pretrained_dir: str | None, config: GPTFinetuningConfig,
                       output_dir: str, data_dir: str = "", model_preset: str = "gpt_tiny",
                       bpe_model: str | None = None) -> dict:
  """Fine-tunes GPT-1 on a registered GPT task (`gpt/<task>`; the bare BERT task name is accepted)
  with L3 = L2 + lm_coef * L1, scores dev with the task's official metrics, and writes model.keras,
  bpe.model, task_info.json, checkpoints/ and tensorboard/, then exports them
  (`export_gpt_finetuned`) to a SavedModel that takes raw strings. Without `pretrained_dir` the decoder is random (the "w/o pre-training"
  ablation) and `bpe_model` must be given."""
  task = get_task(TaskConfig(task=gpt_task_name(task_name), max_seq_length=config.max_seq_length,
                             dropout_rate=config.classifier_dropout, seed=config.seed))
  if not isinstance(task, GPTTask):
    raise UserError(f"task {task.name!r} is not a GPT task; expected one of "
                    f"{[n for n in task_names() if n.startswith('gpt/')]}")
  if pretrained_dir:
    tokenizer = GPTTokenizer(model_path=os.path.join(pretrained_dir, TOKENIZER_FILE))
    decoder_path = os.path.join(pretrained_dir, DECODER_FILE)
    if not os.path.exists(decoder_path):
      raise UserError(f"{decoder_path}: no pretrained decoder (run scripts/run_gpt_pretraining.py)")
    decoder = keras_classes.load_model(decoder_path)
  else:
    if not bpe_model:
      raise UserError("without --init_checkpoint, --bpe_model is required")
    tokenizer = GPTTokenizer(model_path=bpe_model)
    keras.utils.set_random_seed(config.seed)
    decoder = GPTDecoder.from_model_config(get_gpt_config(model_preset,
                                                          vocab_size=tokenizer.vocab_size))
  train_examples = task.read_examples(data_dir, task.train_split)
  eval_examples = {split: task.read_examples(data_dir, split) for split in task.eval_splits}
  task.prepare_labels(train_examples, eval_examples)
  os.makedirs(output_dir, exist_ok=True)
  write_json(os.path.join(output_dir, "config.json"),
             {"task": task.name, "finetuning": config.to_dict(), "pretrained_dir": pretrained_dir,
              "model": decoder.model_config.to_dict(), "layout": task.layout})
  train = task.make_features(train_examples, tokenizer, training=True)
  model = task.build_model(decoder, with_lm_logits=config.lm_coef > 0)
  trainer = gpt_training.finetune(model, {**train.inputs, "labels": train.labels["logits"]},
                                  config, output_dir)
  scores = _split_scores(task, model, tokenizer, eval_examples, output_dir, trainer)
  write_json(os.path.join(output_dir, "metrics.json"), scores)

  # === Artifacts for export: the serving model, the BPE model and what the task needs ===
  info = task.task_info(scores)
  info.update(tokenizer_file=TOKENIZER_FILE, model_file=TASK_MODEL_FILE)
  # A copy without the LM output: it shares the decoder; the classifier is its only own weight.
  serving = task.build_model(model.decoder, with_lm_logits=False)
  serving.classifier.set_weights(model.classifier.get_weights())
  tmp = os.path.join(output_dir, f".{TASK_MODEL_FILE}.tmp-{os.getpid()}.keras")
  serving.save(tmp)
  os.replace(tmp, os.path.join(output_dir, TASK_MODEL_FILE))
  tokenizer.save_model(os.path.join(output_dir, TOKENIZER_FILE))
  write_json(os.path.join(output_dir, "task_info.json"), info)
  export_gpt_finetuned(output_dir, os.path.join(output_dir, "export"))
  return scores


def export_gpt_finetuned(finetune_dir: str, export_dir: str,
                         extra_files: dict[str, str] | None = None) -> dict:
  """Exports a run_gpt_finetuning output directory (model.keras, bpe.model, task_info.json): the
  task named in task_info.json is resolved through the task registry, like BERT's export, and its
  layout fixes the serving signature. Returns the task info."""
  info_path = os.path.join(finetune_dir, "task_info.json")
  if not os.path.isfile(info_path):
    raise UserError(f"{finetune_dir}: no task_info.json; expected a run_gpt_finetuning output "
                    "directory")
  info = read_json_file(info_path, "task_info.json", expected=dict)
  task = get_task(TaskConfig(task=info["task"], max_seq_length=int(info["max_seq_length"])))
  if not isinstance(task, GPTTask):
    raise UserError(f"{info_path}: task {info['task']!r} is not a GPT task")
  task.label_names = info.get("label_names")
  tokenizer = GPTTokenizer(model_path=os.path.join(finetune_dir, info.get("tokenizer_file",
                                                                          TOKENIZER_FILE)))
  model = keras_classes.load_model(os.path.join(finetune_dir, info.get("model_file",
                                                                       TASK_MODEL_FILE)),
                                   compile=False)
  export_text_model(model, tokenizer, task, export_dir, num_choices=info.get("num_choices"),
                    extra_files=extra_files)
  return info


SIGNATURE_FIELDS = {"classification": ("text",), "entailment": ("text_a", "text_b"),
                    "similarity": ("text_a", "text_b"), "multiple_choice": ("context", "endings")}


def export_text_model(model: GPTTaskModel, tokenizer: GPTTokenizer, task: GPTTask,
                      export_dir: str, num_choices: int | None = None,
                      extra_files: dict[str, str] | None = None) -> None:
  """A SavedModel whose `serving_default` takes raw strings and returns logits: BPE tokenization
  and the task's traversal-style layout run in-graph (`GPTTask.pack`). Inputs by layout
  (SIGNATURE_FIELDS): classification `text`; entailment / similarity `text_a`, `text_b`; multiple
  choice `context` (batch,) and `endings` (batch, num_choices). Like the BERT exports it carries
  `kind` ("gpt_<layout>") and `task` string variables, which scripts/predict.py reads, and writes
  `extra_files` (name -> text) under assets.extra/."""
  serving = GPTTaskModel(model.decoder, model.task_type, model.num_outputs, 0.0,
                         with_lm_logits=False)
  serving.get_layer("classifier").set_weights(model.get_layer("classifier").get_weights())
  transform = task.input_transform(tokenizer)
  module = tf.Module()
  module.model, module.tokenizer, module.transform = serving, tokenizer, transform
  module.kind = tf.Variable(f"gpt_{task.layout}", trainable=False, name="kind")
  module.task = tf.Variable(task.name, trainable=False, name="task")

  def run(columns):
    packed = task.pack(transform, [tokenizer.tokenize(c) for c in columns])
    return {"logits": serving(packed, training=False)["logits"]}

  choice = task.layout == "multiple_choice"
  if choice and not num_choices:
    raise UserError(f"{task.name}: multiple-choice export needs num_choices")
  shapes = {"endings": [None, num_choices]}  # every other field: (batch,)

  @tf.function(input_signature=[tf.TensorSpec(shapes.get(name, [None]), tf.string, name=name)
                                for name in SIGNATURE_FIELDS[task.layout]])
  def serve(*columns):
    if choice:
      context, endings = columns
      columns = [context] + [endings[:, k] for k in range(num_choices)]
    return run(list(columns))

  module.serve = ServingCall(module, serve)  # keeps the loaded export alive during a call
  # The same record of what was exported as the BERT exports' (export_model checks it).
  info = {"task": task.name, "kind": f"gpt_{task.layout}", "signatures": ["serving_default"]}
  with staged_dir(export_dir) as stage:
    tf.saved_model.save(module, stage, signatures={"serving_default": serve})
    write_extra_files(stage, {"export_info.json": json.dumps(info, indent=2) + "\n",
                              **(extra_files or {})})
