"""The embedded real sentence-pair regression task (STS-B-like): Lee et al. (2005) news documents.

`lee.cor` holds 50 documents, one per line; `similarities0-1.txt` a 50x50 tab-separated matrix of
mean human ratings in [0, 1] whose upper triangle (i < j) rates pair (i, j): 1,225 pairs. Pair k in
row-major order goes to dev when k % dev_every == dev_every - 1 (default: 980 train / 245 dev).
"""

from __future__ import annotations

import itertools
import os

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks.classification_task import ClassificationExample, ClassificationTask
from bert_keras.tasks.readers import read_lines
from bert_keras.tasks.registry import register_task

DOCUMENTS_NAME = "lee.cor"
SIMILARITIES_NAME = "similarities0-1.txt"


def read_documents(path: str) -> list[str]:
  documents = []
  for number, line in read_lines(path, resources.GENSIM_ENCODING):
    if not line.strip():
      raise UserError(f"{path}:{number}: empty document line")
    documents.append(line.strip())
  if not documents:
    raise UserError(f"{path}: no documents; expected one document per line")
  if len(documents) < 2:
    raise UserError(f"{path}: only 1 document; expected at least 2 (pairs are rated)")
  return documents


def read_similarities(path: str, size: int) -> list[list[float]]:
  rows = []
  for number, line in read_lines(path, resources.GENSIM_ENCODING):
    if not line.strip():
      continue
    cells = line.split()
    if len(cells) != size:
      raise UserError(f"{path}:{number}: {len(cells)} ratings; expected {size} (one per document)")
    try:
      values = [float(c) for c in cells]
    except ValueError:
      raise UserError(f"{path}:{number}: ratings must be numbers") from None
    bad = [v for v in values if not 0.0 <= v <= 1.0]
    if bad:
      raise UserError(f"{path}:{number}: rating {bad[0]} is outside [0, 1]")
    rows.append(values)
  if len(rows) != size:
    raise UserError(f"{path}: {len(rows)} rows; expected {size} (one per document)")
  return rows


@register_task("lee_similarity")
class LeeSimilarityTask(ClassificationTask):
  """Regress the human similarity rating of two documents from [CLS]; Pearson and Spearman."""

  labels = None
  metric_names = ("pearson", "spearman")
  is_pair = True
  predict_splits = ("dev",)  # no test split

  def embedded_data_dir(self) -> str:
    return os.path.dirname(resources.lee_documents_path())

  def read_examples(self, data_dir: str, split: str) -> list:
    if split not in ("train", "dev"):
      raise UserError(f"lee_similarity has splits train and dev, not {split!r}")
    data_dir = self.resolve_data_dir(data_dir)
    documents = read_documents(os.path.join(data_dir, DOCUMENTS_NAME))
    ratings = read_similarities(os.path.join(data_dir, SIMILARITIES_NAME), len(documents))
    every = self.config.dev_every
    pairs = itertools.combinations(range(len(documents)), 2)  # (i, j), i < j, row-major
    return [ClassificationExample(guid=f"{i}-{j}", text_a=documents[i], text_b=documents[j],
                                  label=ratings[i][j])
            for k, (i, j) in enumerate(pairs) if (k % every == every - 1) == (split == "dev")]
