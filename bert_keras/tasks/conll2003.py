"""CoNLL-2003 named entity recognition (Devlin et al., 2018, section 5.3).

One `token POS chunk NER` line per word, blank or -DOCSTART- lines between sentences; tags IOB1
(the original English release) or IOB2 (`tagging_scheme`), trained as IOB2 and written back in the
file's scheme. A word's label is predicted from its first WordPiece; entity-level scores as
conlleval. `approach="feature_based"`: a two-layer BiLSTM over frozen encoder features (5.3).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Sequence

import keras
import numpy as np
from absl import logging

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.tasks import metrics as metrics_lib
from bert_keras.models.heads.bert_feature_tagger import BertFeatureTagger
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.readers import read_lines
from bert_keras.tasks.registry import register_task
from bert_keras.tasks.task import Features, Task

ENTITY_TYPES = ("LOC", "MISC", "ORG", "PER")  # Tjong Kim Sang and De Meulder (2003)
SPLIT_FILES = {"train": ("train.txt", "eng.train"), "dev": ("valid.txt", "dev.txt", "eng.testa"),
               "test": ("test.txt", "eng.testb")}


@dataclasses.dataclass
class NerExample:
  guid: str  # "file:first line"
  words: list
  tags: list  # IOB2


def _entity_type(tag: str) -> str | None:
  return None if tag == "O" else tag[2:]


def _entity_starts_as(tags: Sequence[str], old: str, new: str) -> list[str]:
  """`tags` with each `old` prefix that starts an entity (after O or another type) made `new`."""
  return [new + tag[2:] if tag.startswith(old) and (i == 0 or _entity_type(tags[i - 1]) != tag[2:])
          else tag for i, tag in enumerate(tags)]


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
  return _entity_starts_as(tags, "I-", "B-")


def iob2_to_iob1(tags: Sequence[str]) -> list[str]:
  """B-X stays only where it separates two adjacent entities of type X."""
  return _entity_starts_as(tags, "B-", "I-")


def _check_tag(tag: str, where: str) -> None:
  """A tag of the IOB schemes: O, or B-/I- and one of CoNLL-2003's entity types."""
  if tag == "O":
    return
  if tag[:2] not in ("B-", "I-") or not tag[2:]:
    raise UserError(f"{where}: tag {tag!r} is not O, B-<type> or I-<type> (IOB1 / IOB2; "
                    f"types {list(ENTITY_TYPES)})")
  if tag[2:] not in ENTITY_TYPES:
    raise UserError(f"{where}: tag {tag!r} has entity type {tag[2:]!r}; CoNLL-2003's are "
                    f"{list(ENTITY_TYPES)} (a missing NER column reads the chunk tag instead)")


def _scheme_evidence(tag: str, previous: str) -> str | None:
  """The scheme a tag proves when it begins an entity (after O, another type or nothing): only
  IOB2 begins with B-, only IOB1 with I- (IOB1's B- only separates two entities of one type)."""
  if tag == "O" or _entity_type(previous) == tag[2:]:
    return None
  return "iob2" if tag.startswith("B-") else "iob1"


def read_conll(path: str, scheme: str) -> list[NerExample]:
  """Sentences of a CoNLL file in `scheme` ("iob1" or "iob2"), tags in IOB2. An entity beginning
  the other scheme's way is refused (its gold column would be rewritten wrongly)."""
  examples, words, tags, first_line = [], [], [], 0
  fields = None  # (count, line) of the file's first word line

  def flush():
    nonlocal words, tags
    if words:
      converted = iob1_to_iob2(tags) if scheme == "iob1" else list(tags)
      examples.append(NerExample(guid=f"{os.path.basename(path)}:{first_line}", words=words,
                                 tags=converted))
    words, tags = [], []

  for number, line in read_lines(path):
    if not line.strip() or line.startswith("-DOCSTART-"):
      flush()
      continue
    where = f"{path}:{number}"
    cells = line.split()
    if len(cells) < 2:
      raise UserError(f"{where}: expected 'token POS chunk NER', got {line[:60]!r}")
    if fields is None:
      fields = (len(cells), number)
    elif len(cells) != fields[0]:
      raise UserError(f"{where}: {len(cells)} fields; this file's lines have {fields[0]} (line "
                      f"{fields[1]}); expected 'token POS chunk NER' on every line")
    tag = cells[-1]
    _check_tag(tag, where)
    evidence = _scheme_evidence(tag, tags[-1] if tags else "O")
    if evidence is not None and evidence != scheme:
      raise UserError(f"{where}: {tag!r} begins an entity: the file is {evidence.upper()}, but "
                      f"--tagging_scheme={scheme}; pass --tagging_scheme={evidence}")
    if not words:
      first_line = number
    words.append(cells[0])
    tags.append(tag)
  flush()
  if not examples:
    raise UserError(f"{path}: no sentences")
  return examples


@register_task("conll2003")
class Conll2003Task(Task):
  """Token tagging with IOB2 labels learned from the training file."""

  def read_examples(self, data_dir: str, split: str) -> list:
    names = SPLIT_FILES.get(split)
    if names is None:
      raise UserError(f"conll2003 has splits {sorted(SPLIT_FILES)}, not {split!r}")
    data_dir = self.resolve_data_dir(data_dir)
    for name in names:
      path = os.path.join(data_dir, name)
      if os.path.isfile(path):
        examples = read_conll(path, self.config.tagging_scheme)
        self.data_notes["tagging_scheme"] = self.config.tagging_scheme
        logging.info("%s: read as %s (--tagging_scheme)", path, self.config.tagging_scheme.upper())
        return examples
    raise UserError(f"{data_dir}: none of {list(names)} exists (the CoNLL-2003 {split} file)")

  def prepare_labels(self, train_examples, eval_examples) -> None:
    train = {t for e in train_examples for t in e.tags}
    for split, examples in eval_examples.items():
      extra = {t for e in examples for t in e.tags} - train
      if extra:
        raise UserError(f"conll2003: labels differ between train and {split}: {sorted(extra)} "
                        f"never occur in train (train has {sorted(train)})")
    self.label_names = ["O"] + sorted(train - {"O"})

  def make_features(self, examples: Sequence[NerExample], tokenizer, training: bool) -> Features:
    if self.label_names is None:
      self.prepare_labels(examples, {})
    seq = self.config.max_seq_length
    vocab = sorted({w for e in examples for w in e.words})
    pieces = {}
    for i in range(0, len(vocab), 4096):
      pieces.update(zip(vocab[i:i + 4096], tokenizer.encode(vocab[i:i + 4096])))
    index = {t: i for i, t in enumerate(self.label_names)}
    ids_rows, label_rows, meta = [], [], []

    def emit(example_index, chunk):
      ids, labels, first = [tokenizer.cls_id], [-1], {}
      for word_index, word_pieces in chunk:
        first[word_index] = len(ids)  # the position whose logits label the word
        tag = examples[example_index].tags[word_index]
        labels += [index.get(tag, -1)] + [-1] * (len(word_pieces) - 1)
        ids += word_pieces
      ids.append(tokenizer.sep_id)
      labels.append(-1)
      padding = seq - len(ids)
      ids_rows.append(ids + [tokenizer.pad_id] * padding)
      label_rows.append(labels + [-1] * padding)
      meta.append({"example_index": example_index, "first_piece": first, "length": len(ids)})

    for example_index, example in enumerate(examples):
      # Sentences longer than one window are cut between words into consecutive windows.
      chunk, used = [], 0
      for word_index, word in enumerate(example.words):
        word_pieces = pieces[word][:seq - 2] or [tokenizer.unk_id]
        if used + len(word_pieces) > seq - 2:
          emit(example_index, chunk)
          chunk, used = [], 0
        chunk.append((word_index, word_pieces))
        used += len(word_pieces)
      emit(example_index, chunk)
    ids = np.array(ids_rows, np.int32).reshape(-1, seq)
    mask = (np.arange(seq)[None, :] < np.array([m["length"] for m in meta])[:, None]).astype(np.int32)
    inputs = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": np.zeros_like(ids)}
    labels = {"logits": np.array(label_rows, np.int32).reshape(-1, seq)}
    return Features(inputs=inputs, labels=labels, meta=meta)

  def build_model(self, encoder: keras.Model) -> keras.Model:
    cfg = self.config
    if cfg.approach == "feature_based":
      return BertFeatureTagger(encoder, len(self.label_names), feature_layers=cfg.feature_layers,
                               lstm_units=cfg.lstm_units, dropout_rate=cfg.dropout_rate,
                               name="conll2003_feature_tagger")
    return BertTokenClassifier(encoder, len(self.label_names), dropout_rate=cfg.dropout_rate,
                               name="conll2003_token_classifier")

  def compile_kwargs(self) -> dict:
    # Only first pieces carry a label; -1 (other pieces, [CLS], [SEP], padding) is ignored.
    return {"loss": {"logits": keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=-1)}}

  def postprocess(self, examples, features: Features, outputs) -> list[dict]:
    logits = np.asarray(outputs["logits"], np.float32)
    predicted = [["O"] * len(e.words) for e in examples]
    for f, m in enumerate(features.meta):
      for word_index, position in m["first_piece"].items():
        predicted[m["example_index"]][word_index] = self.label_names[int(logits[f, position].argmax())]
    return [{"guid": e.guid, "words": e.words, "gold": e.tags, "predicted": p}
            for e, p in zip(examples, predicted)]

  def evaluate(self, examples, predictions) -> dict:
    return metrics_lib.entity_scores([p["gold"] for p in predictions],
                                     [p["predicted"] for p in predictions])

  def write_predictions(self, predictions: Any, path_stem: str) -> str:
    """`<path_stem>.json` and `<path_stem>.conlleval.txt` (`word gold predicted` per line), in the
    input files' scheme."""
    convert = iob2_to_iob1 if self.config.tagging_scheme == "iob1" else list
    written = [{**p, "gold": convert(p["gold"]), "predicted": convert(p["predicted"])}
               for p in predictions]
    sentences = ["".join(f"{word} {gold} {pred}\n" for word, gold, pred in
                         zip(p["words"], p["gold"], p["predicted"])) for p in written]
    write_text(path_stem + ".conlleval.txt", "\n".join(sentences) + "\n")  # a blank line after each
    return super().write_predictions(written, path_stem)

  def task_info(self, metrics=None) -> dict:
    info = super().task_info(metrics)
    info.update(tagging_scheme="iob2", input_tagging_scheme=self.config.tagging_scheme,
                label_on="first_piece", approach=self.config.approach)
    return info
