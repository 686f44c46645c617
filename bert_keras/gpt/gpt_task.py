"""GPT-1 fine-tuning tasks in the project's task registry (Radford et al., 2018, section 3.3): a
registered BERT task's data, labels, post-processing and official metrics, read by the left-to-right
model through one of GPT-1's traversal-style input layouts (GPTInputTransform; each task's: the
registrations at the end). `gpt/<task>` resolves as `<task>` does for BERT; `GPTFamily` trains it
and `export_run` exports it.
"""

from __future__ import annotations

from typing import Sequence

import keras
import numpy as np
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.gpt.gpt_export import export_gpt_finetuned
from bert_keras.gpt.gpt_finetuning import GPTFamily
from bert_keras.gpt.gpt_input_transform import GPTInputTransform
from bert_keras.gpt.losses import NextTokenLoss
from bert_keras.models.gpt_task_model import GPTTaskModel
from bert_keras.tasks.registry import get_task_class, register_task
from bert_keras.tasks.task import Features, Task

LAYOUTS = ("classification", "entailment", "similarity", "multiple_choice")
PREFIX = "gpt/"


class GPTTask(Task):
  """Subclasses set `base_task` (a registered BERT task name) and `layout` (one of LAYOUTS)."""

  base_task: str = ""
  layout: str = ""
  model_family = GPTFamily()
  export_run = staticmethod(export_gpt_finetuned)
  loss_parts = {"logits_loss": "task_loss", "lm_logits_loss": "lm_loss"}  # L2 and L1 of L3

  def __init__(self, config):
    super().__init__(config)
    if self.layout not in LAYOUTS:
      raise ValueError(f"{type(self).__name__}: layout={self.layout!r}; expected one of {LAYOUTS}")
    # The BERT task supplies the reader, label set, predictions format and metrics.
    self.base = get_task_class(self.base_task)(config.replace(task=self.base_task))
    self.label_names = self.base.label_names
    self.train_split = self.base.train_split
    self.eval_splits = self.base.eval_splits
    self.lm_coef = getattr(config, "lm_coef", 0.0)  # lambda of L3 (a GPTTaskConfig's)

  @property
  def is_regression(self) -> bool:
    return self.layout != "multiple_choice" and self.label_names is None

  @property
  def num_outputs(self) -> int:
    """Classes; 1 for regression and for multiple choice (one score per answer)."""
    if self.layout == "multiple_choice" or self.is_regression:
      return 1
    return len(self.label_names)

  # --- data -------------------------------------------------------------------------------------

  def embedded_data_dir(self):
    return self.base.embedded_data_dir()

  def read_examples(self, data_dir: str, split: str) -> list:
    return self.base.read_examples(data_dir, split)

  def prepare_labels(self, train_examples, eval_examples) -> None:
    self.base.prepare_labels(train_examples, eval_examples)
    self.label_names = self.base.label_names

  def input_transform(self, tokenizer) -> GPTInputTransform:
    return GPTInputTransform(self.config.max_seq_length, tokenizer.start_id,
                             tokenizer.delimiter_id, tokenizer.extract_id, tokenizer.pad_id)

  def texts(self, examples: Sequence) -> list:
    """The example's text fields in the layout's order: [text], [a, b] or [context, answer_k...]."""
    if self.layout == "multiple_choice":
      return [[e.context for e in examples]] + [
          [f"{e.start_ending} {e.endings[k]}".strip() for e in examples]
          for k in range(len(examples[0].endings))]
    if self.layout == "classification":
      return [[e.text_a for e in examples]]
    return [[e.text_a for e in examples], [e.text_b or "" for e in examples]]

  def pack(self, transform: GPTInputTransform, segments: Sequence) -> dict:
    """Ragged token segments (batch, (tokens)) in `texts` order -> the layout's int32 inputs.
    Runs in-graph, so training features and the exported text-in signature share it."""
    if self.layout == "multiple_choice":
      return transform.multiple_choice(segments[0], list(segments[1:]))
    return getattr(transform, self.layout)(*segments)  # classification, entailment, similarity

  def make_features(self, examples: Sequence, tokenizer, training: bool) -> Features:
    """`tokenizer` is a GPTTokenizer (BPE with start / delimiter / extract tokens)."""
    if not examples:
      raise UserError(f"{self.name}: no examples to featurize")
    # Python-side BPE (`encode`, equal to the in-graph `tokenize` the export uses: see
    # tests/gpt/test_gpt_tokenizer.py), so featurizing never depends on a live TF resource.
    segments = [tf.ragged.constant(tokenizer.encode(column), tf.int32, ragged_rank=1)
                for column in self.texts(examples)]
    inputs = {k: v.numpy() for k, v in self.pack(self.input_transform(tokenizer), segments).items()}
    labels = None
    if all(e.label is not None for e in examples):
      if self.is_regression:
        labels = np.array([float(e.label) for e in examples], np.float32)
      elif self.layout == "multiple_choice":
        labels = np.array([int(e.label) for e in examples], np.int32)
      else:
        index = {name: i for i, name in enumerate(self.label_names)}
        labels = np.array([index[e.label] for e in examples], np.int32)
      labels = {"logits": labels}
      if training and self.lm_coef:  # L1's targets: the ids themselves, -1 at padding
        labels["lm_logits"] = np.where(inputs["input_mask"] > 0, inputs["input_word_ids"], -1)
    return Features(inputs=inputs, labels=labels, meta=[e.guid for e in examples])

  # --- model ------------------------------------------------------------------------------------

  def build_model(self, encoder: keras.Model) -> keras.Model:
    """`encoder` is a GPTDecoder; with lm_coef > 0 the model also outputs `lm_logits` (L1)."""
    # GPTTaskModel's input layout: entailment is one packed sequence, like classification.
    task_type = "classification" if self.layout == "entailment" else self.layout
    return GPTTaskModel(encoder, task_type, num_outputs=self.num_outputs,
                        classifier_dropout=self.config.dropout_rate,
                        with_lm_logits=bool(self.lm_coef),
                        name=f"{self.name.replace('/', '_')}_model")

  def compile_kwargs(self) -> dict:
    """L3 = L2 + lm_coef * L1 (Keras `fit`); L2 alone with lm_coef = 0."""
    task_loss = (keras.losses.MeanSquaredError() if self.is_regression
                 else keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    if not self.lm_coef:
      return {"loss": {"logits": task_loss}}
    return {"loss": {"logits": task_loss, "lm_logits": NextTokenLoss()},
            "loss_weights": {"logits": 1.0, "lm_logits": self.lm_coef}}

  # --- outputs ----------------------------------------------------------------------------------

  def postprocess(self, examples, features, outputs):
    return self.base.postprocess(examples, features, outputs)

  def evaluate(self, examples, predictions) -> dict:
    return self.base.evaluate(examples, predictions)

  def task_info(self, metrics=None) -> dict:
    info = self.base.task_info(metrics)
    info.update(task=self.name, base_task=self.base_task, model="gpt", layout=self.layout)
    return info


def _gpt_task(base_task: str, layout: str) -> type:
  cls = type(f"GPT{''.join(p.capitalize() for p in base_task.replace('/', '_').split('_'))}Task",
             (GPTTask,), {"base_task": base_task, "layout": layout})
  cls.__doc__ = f"GPT-1 on {base_task} with the {layout} input layout."
  return register_task(PREFIX + base_task)(cls)


# GPT-1 section 3.3 / Table 2-4: which layout each task family uses.
_gpt_task("polarity", "classification")
_gpt_task("glue/sst2", "classification")
_gpt_task("glue/cola", "classification")
_gpt_task("glue/rte", "entailment")
_gpt_task("glue/mnli", "entailment")
_gpt_task("glue/qnli", "entailment")
_gpt_task("glue/wnli", "entailment")
_gpt_task("lee_similarity", "similarity")
_gpt_task("glue/stsb", "similarity")
_gpt_task("glue/mrpc", "similarity")
_gpt_task("glue/qqp", "similarity")
_gpt_task("swag", "multiple_choice")

