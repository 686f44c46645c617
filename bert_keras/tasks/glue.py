"""The nine GLUE tasks (Wang et al., 2018; Devlin et al., 2018, section 4.1), read from the official
TSV files (`--data_dir` = e.g. glue_data/MRPC) or tensorflow-datasets (`--data_dir=tfds:[dir]`)."""

from __future__ import annotations

import os

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.tasks.classification_task import ClassificationExample, ClassificationTask
from bert_keras.tasks.readers import read_tsv, require_file
from bert_keras.tasks.registry import register_task

TFDS_PREFIX = "tfds:"
_TFDS_SPLITS = {"train": "train", "dev": "validation", "dev_matched": "validation_matched",
                "dev_mismatched": "validation_mismatched"}


class GlueTask(ClassificationTask):
  """A GLUE task described by its file layout (columns may be negative: MNLI's label is last)."""

  header: bool = True
  text_a_column: int = 0
  text_b_column: int | None = None
  label_column: int = -1
  tfds_name: str = ""
  tfds_fields: tuple = ("sentence",)
  label_range: tuple | None = None  # (low, high) of a regression task's scores, both included
  num_columns: int = 0  # of a file without a header row; others have the header's
  # The unlabeled test files: official header, (index, text_a, text_b) columns, submission names.
  test_header: tuple = ()
  test_columns: tuple = (0, 1, 2)
  submission_names: dict = {}
  # Unlabeled splits in another layout: split -> (candidate paths, header, columns), predicted by
  # default when one exists (MNLI's AX).
  extra_test_files: dict = {}

  def split_path(self, data_dir: str, split: str) -> str:
    """`<split>.tsv`, or the first existing candidate of an extra test split (else the first)."""
    if split not in self.extra_test_files:
      return os.path.join(data_dir, f"{split}.tsv")
    paths = [os.path.normpath(os.path.join(data_dir, name))
             for name in self.extra_test_files[split][0]]
    return next((path for path in paths if os.path.isfile(path)), paths[0])

  def default_predict_splits(self, data_dir: str) -> tuple:
    if data_dir.startswith(TFDS_PREFIX):
      return super().default_predict_splits(data_dir)
    return tuple(split for split in self.predict_splits if split not in self.extra_test_files
                 or os.path.isfile(self.split_path(data_dir, split)))

  def read_examples(self, data_dir: str, split: str) -> list:
    data_dir = self.resolve_data_dir(data_dir)
    if data_dir.startswith(TFDS_PREFIX):
      return self._read_tfds(data_dir[len(TFDS_PREFIX):] or None, split)
    path = require_file(self.split_path(data_dir, split), f"the GLUE {self.name} {split} file")
    test = split in self.predict_splits
    if test:  # unlabeled: guid = the index cell, which the submission writes back
      header, (index, text_a, text_b) = self.extra_test_files.get(
          split, (None, self.test_header, self.test_columns))[1:]
      label_column = None
    else:
      header, index, text_a, text_b = self.header, None, self.text_a_column, self.text_b_column
      label_column = self.label_column
    columns = [c for c in (index, text_a, text_b, label_column) if c is not None]
    needed = max(c if c >= 0 else -c - 1 for c in columns) + 1
    # Every row has the header's column count (CoLA: four); a tab inside a sentence shifts them.
    expected, source = max(needed, self.num_columns), f"{self.name} rows"
    examples = []
    for number, row in read_tsv(path):
      where = f"{path}:{number}"
      if header:
        # A labelled file read as a test file would put its labels or ids in the index column.
        if test and tuple(row) != header:
          raise UserError(f"{where}: header {_cells(row)} is not the unlabeled GLUE "
                          f"{self.name} test layout {_cells(header)}; a labelled "
                          "(train/dev) file cannot give a submission")
        header = None
        if len(row) >= needed:
          expected, source = len(row), "the header"
        continue
      if len(row) != expected:
        raise UserError(f"{where}: {len(row)} tab-separated columns; expected {expected} as in "
                        f"{source} (a tab inside a sentence adds one)")
      label = None
      if not test:
        label = self.check_label(row[label_column].strip(), where)
        if self.label_range is not None and not (
            self.label_range[0] <= label <= self.label_range[1]):
          raise UserError(f"{where}: label {row[label_column].strip()!r} is outside "
                          f"{self.name}'s score range [{self.label_range[0]:g}, "
                          f"{self.label_range[1]:g}]")
      examples.append(ClassificationExample(
          guid=row[index] if test else f"{split}-{len(examples)}", text_a=row[text_a],
          text_b=row[text_b] if text_b is not None else None, label=label))
    if not examples:
      raise UserError(f"{path}: no examples")
    return examples

  def write_submission(self, examples, predictions, split: str, directory: str) -> list[str]:
    """The GLUE server's `<TASK>.tsv` (`index<TAB>prediction` rows)."""
    name = self.submission_names.get(split)
    if name is None:
      return []
    value = "{:.3f}" if self.is_regression else "{}"
    rows = ["index\tprediction"] + [f"{e.guid}\t{value.format(p['prediction'])}"
                                     for e, p in zip(examples, predictions)]
    path = os.path.join(directory, f"{name}.tsv")
    write_text(path, "\n".join(rows) + "\n")
    return [path]

  def _read_tfds(self, tfds_dir: str | None, split: str) -> list:
    if split not in _TFDS_SPLITS:
      raise UserError(f"{self.name}: split {split!r} is read from the GLUE TSV files only; "
                      f"from tfds: {sorted(_TFDS_SPLITS)}")
    import tensorflow_datasets as tfds  # Only for users with a network (downloads on first use).
    from bert_keras.data.tfds_prepare import prepared_builder  # pylint: disable=import-outside-toplevel

    builder = prepared_builder(self.tfds_name, tfds_dir)
    label_feature = builder.info.features["label"]
    examples = []
    for record in tfds.as_numpy(builder.as_dataset(split=_TFDS_SPLITS[split])):
      texts = [record[f].decode("utf-8") for f in self.tfds_fields]
      raw = record["label"]
      if self.is_regression:
        label = float(raw)
      else:
        name = label_feature.int2str(int(raw))
        label = name if name in self.labels else str(int(raw))
      examples.append(ClassificationExample(
          guid=f"{split}-{len(examples)}", text_a=texts[0],
          text_b=texts[1] if len(texts) > 1 else None, label=label))
    return examples


def _cells(row) -> str:
  """A header for messages: its cells joined by tabs, shortened."""
  text = "\t".join(row)
  return repr(text if len(text) <= 80 else text[:77] + "...")


def _glue(name: str, submission: str = "", **spec) -> type:
  """Registers GLUE task `name`; `submission`: its test split's `<name>.tsv` for the GLUE server."""
  spec = {"tfds_name": f"glue/{name}", "submission_names": {"test": submission},
          "is_pair": spec.get("text_b_column") is not None, **spec}
  cls = type(f"Glue{name.capitalize()}Task", (GlueTask,), spec)
  cls.__doc__ = f"GLUE {name}: {spec.get('metric_names')} on dev."
  return register_task(f"glue/{name}")(cls)


_BINARY = ("0", "1")
_NLI2 = ("entailment", "not_entailment")
_PAIR = ("sentence1", "sentence2")
_INDEX_PAIR = ("index", "sentence1", "sentence2")
_SINGLE_TEST = {"test_header": ("index", "sentence"), "test_columns": (0, 1, None)}
_AX_FILES = ("AX.tsv", "diagnostic.tsv", os.path.join("..", "diagnostic", "diagnostic.tsv"))
_MNLI_TEST_HEADER = ("index", "promptID", "pairID", "genre", "sentence1_binary_parse",
                     "sentence2_binary_parse", "sentence1_parse", "sentence2_parse", "sentence1",
                     "sentence2")

# Train and dev columns follow each task's official files; test.tsv (no label, a header in every
# task) gives (index, text_a, text_b), and its predictions go to the GLUE server as `<name>.tsv`.
# CoLA: no header; columns: source, label, original label, sentence. Matthews correlation.
_glue("cola", "CoLA", header=False, num_columns=4, text_a_column=3, label_column=1, labels=_BINARY,
      metric_names=("matthews_corrcoef",), **_SINGLE_TEST)
# SST-2: sentence, label. Test: index, sentence.
_glue("sst2", "SST-2", label_column=1, labels=_BINARY, metric_names=("accuracy",), **_SINGLE_TEST)
# MRPC: Quality, #1 ID, #2 ID, #1 String, #2 String (test: index first). F1 of "1" and accuracy.
_glue("mrpc", "MRPC", text_a_column=3, text_b_column=4, label_column=0, labels=_BINARY,
      metric_names=("f1", "accuracy"), positive_label="1", tfds_fields=_PAIR,
      test_header=("index", "#1 ID", "#2 ID", "#1 String", "#2 String"), test_columns=(0, 3, 4))
# STS-B: index genre filename year old_index source1 source2 sentence1 sentence2 score (0 to 5;
# anything else is a wrong column or a corrupt row). Test: the same columns without the score.
_glue("stsb", "STS-B", text_a_column=7, text_b_column=8, labels=None, label_range=(0.0, 5.0),
      metric_names=("pearson", "spearman"), tfds_fields=_PAIR, test_columns=(0, 7, 8),
      test_header=("index", "genre", "filename", "year", "old_index", "source1", "source2", *_PAIR))
# QQP: id qid1 qid2 question1 question2 is_duplicate (test: id, question1, question2). F1, accuracy.
_glue("qqp", "QQP", text_a_column=3, text_b_column=4, label_column=5, labels=_BINARY,
      metric_names=("f1", "accuracy"), positive_label="1", tfds_fields=("question1", "question2"),
      test_header=("id", "question1", "question2"))
# MNLI: sentence1 / sentence2 at 8 / 9, gold_label last; matched and mismatched dev and test. The
# diagnostic set AX, whose MNLI predictions every submission includes: AX.tsv or diagnostic.tsv
# here, or glue_data/diagnostic/diagnostic.tsv beside it (where the download script puts it).
_glue("mnli", text_a_column=8, text_b_column=9, labels=("contradiction", "entailment", "neutral"),
      metric_names=("accuracy",), eval_splits=("dev_matched", "dev_mismatched"),
      tfds_fields=("premise", "hypothesis"), test_header=_MNLI_TEST_HEADER, test_columns=(0, 8, 9),
      predict_splits=("test_matched", "test_mismatched", "ax"),
      submission_names={"test_matched": "MNLI-m", "test_mismatched": "MNLI-mm", "ax": "AX"},
      extra_test_files={"ax": (_AX_FILES, _INDEX_PAIR, (0, 1, 2))})
# QNLI: index question sentence label. Test: index, question, sentence.
_glue("qnli", "QNLI", text_a_column=1, text_b_column=2, label_column=3, labels=_NLI2,
      metric_names=("accuracy",), tfds_fields=("question", "sentence"),
      test_header=("index", "question", "sentence"))
# RTE and WNLI: index sentence1 sentence2 label. Test: index, sentence1, sentence2.
_glue("rte", "RTE", text_a_column=1, text_b_column=2, label_column=3, labels=_NLI2,
      metric_names=("accuracy",), tfds_fields=_PAIR, test_header=_INDEX_PAIR)
_glue("wnli", "WNLI", text_a_column=1, text_b_column=2, label_column=3, labels=_BINARY,
      metric_names=("accuracy",), tfds_fields=_PAIR, test_header=_INDEX_PAIR)
