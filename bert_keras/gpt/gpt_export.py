"""GPT-1's text-in SavedModel: BPE tokenization, the task's input layout and the fine-tuned model
in one graph (scripts/export_model.py --finetuned_dir=<a gpt/<task> run>, through `GPTTask.export_run`).
"""

from __future__ import annotations

import json
import os

import tensorflow as tf

from bert_keras import keras_classes
from bert_keras.atomic_io import staged_dir
from bert_keras.configs.tasks import TaskConfig
from bert_keras.errors import UserError
from bert_keras.export.export_task_model import write_extra_files
from bert_keras.export.serving_module import ServingCall
from bert_keras.gpt.gpt_finetuning import GPTFamily
from bert_keras.gpt.gpt_pretraining import TOKENIZER_FILE
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.json_io import read_json_file
from bert_keras.tasks.registry import get_task

TASK_MODEL_FILE = "model.keras"


def export_gpt_finetuned(finetuned_dir: str, export_dir: str,
                         extra_files: dict[str, str] | None = None) -> dict:
  """Exports a gpt/<task> fine-tuning directory (model.keras, bpe.model, task_info.json): the
  exporter finds this function through the task registry (`GPTTask.export_run`), and the task's
  layout fixes the serving signature. Returns the task info."""
  info = read_json_file(os.path.join(finetuned_dir, "task_info.json"), "task_info.json",
                        expected=dict)
  task = get_task(TaskConfig(task=info["task"], max_seq_length=int(info["max_seq_length"])))
  task.label_names = info.get("label_names")
  tokenizer = GPTTokenizer(model_path=os.path.join(finetuned_dir, info.get("tokenizer_file",
                                                                          TOKENIZER_FILE)))
  model = keras_classes.load_model(os.path.join(finetuned_dir, info.get("model_file",
                                                                       TASK_MODEL_FILE)),
                                   compile=False)
  export_text_model(model, tokenizer, task, export_dir, num_choices=info.get("num_choices"),
                    extra_files=extra_files)
  return info


SIGNATURE_FIELDS = {"classification": ("text",), "entailment": ("text_a", "text_b"),
                    "similarity": ("text_a", "text_b"), "multiple_choice": ("context", "endings")}


def export_text_model(model, tokenizer: GPTTokenizer, task,
                      export_dir: str, num_choices: int | None = None,
                      extra_files: dict[str, str] | None = None) -> None:
  """A SavedModel whose `serving_default` takes the layout's SIGNATURE_FIELDS as raw strings
  (`endings`: (batch, num_choices)) and returns logits, BPE and `GPTTask.pack` in-graph; with
  `kind` ("gpt_<layout>") and `task` variables, as the BERT exports, and `extra_files`."""
  serving = GPTFamily().serving_model(model)
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
