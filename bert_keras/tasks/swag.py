"""SWAG (Zellers et al., 2018; Devlin et al., 2018, section 4.4): pick the most plausible of four
endings. Each (sent1, sent2 + " " + ending_k) pair is one sequence; a learned vector scores each
[CLS] and a softmax runs over the four. Accuracy. The official CSV files; a guid is the unnamed
index cell (`file:line` without it), and test predictions go to `submission.csv` under the test
file's own id columns.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from typing import Sequence

import keras
import numpy as np

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.json_io import TEXT_ENCODING
from bert_keras.tasks import metrics as metrics_lib
from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice
from bert_keras.tasks.packing import pack_batch
from bert_keras.tasks.readers import first_undecodable_line, require_file
from bert_keras.tasks.registry import register_task
from bert_keras.tasks.task import Features, Task

NUM_CHOICES = 4
SPLIT_FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}
REQUIRED_COLUMNS = ("sent1", "sent2", "ending0", "ending1", "ending2", "ending3")
# The official files' ids: the unnamed row index (optional), video-id and fold-ind (required in
# test.csv, whose submission names its rows by them).
ID_COLUMNS = ("", "video-id", "fold-ind")
TEST_ID_COLUMNS = ("video-id", "fold-ind")
SUBMISSION_NAME = "submission.csv"


@dataclasses.dataclass
class SwagExample:
  guid: str
  context: str
  start_ending: str
  endings: list
  label: int | None = None
  ids: dict = dataclasses.field(default_factory=dict)  # the ID_COLUMNS the file has -> cell


def read_swag(path: str, require_label: bool, require_ids: bool = False) -> list[SwagExample]:
  """Rows of the official CSV; bad input raises a UserError naming the file and the row's line."""
  require_file(path, "a SWAG CSV file")
  try:
    return _read_swag_rows(path, require_label, require_ids)
  except UnicodeDecodeError as e:
    found = first_undecodable_line(path, "utf-8")
    line, reason = (found[0], found[1].reason) if found else ("?", e.reason)
    raise UserError(f"{path}:{line}: not valid UTF-8 ({reason}); expected a UTF-8 CSV file") from None


def _read_swag_rows(path: str, require_label: bool, require_ids: bool) -> list[SwagExample]:
  examples = []
  with open(path, encoding=TEXT_ENCODING, newline="") as f:  # a byte-order mark dropped
    reader = csv.reader(f)
    header = _next_row(reader, path, 1)
    if header is None:
      raise UserError(f"{path}: empty file")
    needed = (REQUIRED_COLUMNS + (("label",) if require_label else ())
              + (TEST_ID_COLUMNS if require_ids else ()))
    missing = [c for c in needed if c not in header]
    if missing:
      raise UserError(f"{path}:1: header lacks columns {missing}; expected the official "
                      "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0..3,label")
    col = {name: header.index(name) for name in header}
    while True:
      row = _next_row(reader, path, reader.line_num + 1)
      if row is None:
        break
      line = reader.line_num
      if not row:
        continue
      if len(row) != len(header):
        raise UserError(f"{path}:{line}: {len(row)} columns; the header has {len(header)}")
      label = None
      if "label" in col and row[col["label"]] != "":
        try:
          label = int(row[col["label"]])
        except ValueError:
          raise UserError(f"{path}:{line}: label {row[col['label']]!r} is not 0-3") from None
        if not 0 <= label < NUM_CHOICES:
          raise UserError(f"{path}:{line}: label {label} is not 0-3")
      elif require_label:
        raise UserError(f"{path}:{line}: missing label")
      ids = {name: row[col[name]] for name in ID_COLUMNS if name in col}
      examples.append(SwagExample(
          guid=ids.get("", f"{os.path.basename(path)}:{line}"), context=row[col["sent1"]],
          start_ending=row[col["sent2"]],
          endings=[row[col[f"ending{k}"]] for k in range(NUM_CHOICES)], label=label, ids=ids))
  if not examples:
    raise UserError(f"{path}: no examples")
  return examples


def _next_row(reader, path: str, start_line: int):
  """The next CSV row, None at the end; a malformed row is a UserError naming its line."""
  try:
    return next(reader, None)
  except csv.Error as e:
    raise UserError(f"{path}:{start_line}: not a valid CSV row ({e}); expected comma-separated "
                    "cells with balanced double quotes") from None


@register_task("swag")
class SwagTask(Task):
  """Four-way multiple choice over [CLS] scores."""

  def __init__(self, config):
    super().__init__(config)
    self.label_names = [str(k) for k in range(NUM_CHOICES)]

  def read_examples(self, data_dir: str, split: str) -> list:
    if split not in SPLIT_FILES:
      raise UserError(f"swag has splits {sorted(SPLIT_FILES)}, not {split!r}")
    return read_swag(os.path.join(self.resolve_data_dir(data_dir), SPLIT_FILES[split]),
                     require_label=split != "test", require_ids=split == "test")

  def has_labels(self, examples) -> bool:
    return all(e.label is not None for e in examples)

  def make_features(self, examples: Sequence[SwagExample], tokenizer, training: bool) -> Features:
    seq = self.config.max_seq_length
    contexts = tokenizer.encode([e.context for e in examples])
    endings = tokenizer.encode([f"{e.start_ending} {ending}".strip()
                                for e in examples for ending in e.endings])
    packed = pack_batch([c for c in contexts for _ in range(NUM_CHOICES)], endings, seq,
                        tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)  # (n * choices, seq)
    inputs = {name: ids.reshape(-1, NUM_CHOICES, seq) for name, ids in packed.items()}
    labels = ({"logits": np.array([e.label for e in examples], np.int32)}
              if self.has_labels(examples) else None)
    return Features(inputs=inputs, labels=labels, meta=[e.guid for e in examples])

  def build_model(self, encoder: keras.Model) -> keras.Model:
    return BertMultipleChoice(encoder, dropout_rate=self.config.dropout_rate,
                              name="swag_multiple_choice")

  def compile_kwargs(self) -> dict:
    return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}}

  def postprocess(self, examples, features, outputs) -> list[dict]:
    logits = np.asarray(outputs["logits"], np.float32)
    return [{"guid": e.guid, **{k: v for k, v in e.ids.items() if k},  # video-id, fold-ind
             "prediction": int(row.argmax()), "logits": [float(x) for x in row]}
            for e, row in zip(examples, logits)]

  def write_submission(self, examples, predictions, split: str, directory: str) -> list[str]:
    """The test split's `submission.csv`: the test file's id columns and the predicted ending."""
    if split != "test":
      return []
    columns = [name for name in ID_COLUMNS if name in examples[0].ids] if examples else []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns + ["label"])
    for example, prediction in zip(examples, predictions):
      writer.writerow([example.ids[name] for name in columns] + [prediction["prediction"]])
    path = os.path.join(directory, SUBMISSION_NAME)
    write_text(path, out.getvalue())
    return [path]

  def evaluate(self, examples, predictions) -> dict:
    return {"accuracy": metrics_lib.CLASSIFICATION_METRICS["accuracy"](
        [e.label for e in examples], [p["prediction"] for p in predictions])}

  def task_info(self, metrics=None) -> dict:
    info = super().task_info(metrics)
    info.update(num_segments=2, num_choices=NUM_CHOICES)
    return info
