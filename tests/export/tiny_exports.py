"""Tiny text-in exports of every kind (one layer, hidden 16, the real uncased vocabulary), for tests
of what the exported SavedModels answer rather than of the models' quality: untrained weights."""

from __future__ import annotations

import keras

from bert_keras import resources
from bert_keras.export import export_task_model as exporter
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice
from bert_keras.models.heads.bert_span_labeler import BertSpanLabeler
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config

SEQ = 32
NER_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
# kind -> (export kind, keyword arguments of export_task_model)
KINDS = {
    "encoder": ("encoder", {}),
    "classification": ("classification", {"labels": ["neg", "pos"]}),
    "pair_classification": ("classification", {"labels": ["no", "yes"], "extra": {"pair": True}}),
    "regression": ("regression", {"extra": {"pair": True}}),
    "squad": ("squad", {"extra": {"version_2": True, "doc_stride": 8, "max_query_length": 8}}),
    "squad_v1": ("squad", {"extra": {"version_2": False, "doc_stride": 8, "max_query_length": 8}}),
    "multiple_choice": ("multiple_choice", {}),
    "tagging": ("tagging", {"labels": NER_LABELS, "extra": {"doc_stride": 15}}),
}


def tokenizer() -> BertTokenizer:
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


def build(kind: str, vocab: BertTokenizer | None = None):
  """(export kind, untrained tiny model, keyword arguments of export_task_model) for `kind` (a key
  of KINDS)."""
  vocab = vocab or tokenizer()
  keras.utils.set_random_seed(3)
  config = get_model_config("bert_tiny", vocab_size=vocab.vocab_size, num_layers=1,
                            hidden_size=16, num_heads=2, intermediate_size=32,
                            max_position_embeddings=SEQ)
  encoder = BertEncoder.from_model_config(config)
  export_kind, options = KINDS[kind]
  model = {"encoder": lambda: encoder,
           "classification": lambda: BertClassifier(encoder, len(options.get("labels") or [0])),
           "regression": lambda: BertClassifier(encoder, 1),
           "squad": lambda: BertSpanLabeler(encoder),
           "multiple_choice": lambda: BertMultipleChoice(encoder),
           "tagging": lambda: BertTokenClassifier(encoder, len(NER_LABELS))}[export_kind]()
  return export_kind, model, dict(options, task=f"tiny_{kind}")


def export(kind: str, path: str, vocab: BertTokenizer | None = None) -> str:
  """Writes a tiny export of `kind` (a key of KINDS) to path; returns path."""
  vocab = vocab or tokenizer()
  export_kind, model, options = build(kind, vocab)
  return exporter.export_task_model(model, export_kind, vocab, path, max_seq_length=SEQ,
                                    **options)
