"""The embedded real single-sentence task: 200 Pang & Lee movie-review sentences (SST-2-like).

File layout (fastText style): `__label__pos <text>` or `__label__neg <text>`, one per line. With no
official split, the k-th item of each class goes to dev when k % dev_every == dev_every - 1
(default 5: 160 train / 40 dev, balanced, the same on every machine).
"""

from __future__ import annotations

import collections
import os

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks.classification_task import ClassificationExample, ClassificationTask
from bert_keras.tasks.readers import read_lines
from bert_keras.tasks.registry import register_task

FILE_NAME = "pang_lee_polarity.cor"
_PREFIX = "__label__"


@register_task("polarity")
class PolarityTask(ClassificationTask):
  """Binary sentiment of one sentence; accuracy and F1 of "pos"."""

  labels = ("neg", "pos")
  metric_names = ("accuracy", "f1")
  positive_label = "pos"
  predict_splits = ("dev",)  # no test split

  def embedded_data_dir(self) -> str:
    return os.path.dirname(resources.polarity_path())

  def read_examples(self, data_dir: str, split: str) -> list:
    if split not in ("train", "dev"):
      raise UserError(f"polarity has splits train and dev, not {split!r}")
    path = self.resolve_data_dir(data_dir)
    if os.path.isdir(path):
      path = os.path.join(path, FILE_NAME)
    seen = collections.Counter()
    examples = []
    for number, line in read_lines(path, resources.GENSIM_ENCODING):
      if not line.strip():
        continue
      tag, _, text = line.partition(" ")
      if not tag.startswith(_PREFIX) or not text.strip():
        raise UserError(f"{path}:{number}: expected '__label__<label> <text>', got {line[:40]!r}")
      label = self.check_label(tag[len(_PREFIX):], f"{path}:{number}")
      k = seen[label]
      seen[label] += 1
      is_dev = k % self.config.dev_every == self.config.dev_every - 1
      if is_dev == (split == "dev"):
        examples.append(ClassificationExample(guid=f"{os.path.basename(path)}:{number}",
                                              text_a=text.strip(), label=label))
    if not examples:
      raise UserError(f"{path}: no {split} examples")
    return examples
