"""The artifact types that flow through the pipeline (names follow TFX where TFX has one)."""

from __future__ import annotations

from bert_keras.orchestration.artifact import Artifact


class Corpus(Artifact):
  """Documents in the Google BERT text layout: one sentence per line, blank line between documents."""
  TYPE_NAME = "Corpus"


class Vocabulary(Artifact):
  """A WordPiece `vocab.txt` (one token per line, id = line number)."""
  TYPE_NAME = "Vocabulary"


class Examples(Artifact):
  """Serialized tf.train.Examples in TFRecord shards (pretraining instances)."""
  TYPE_NAME = "Examples"


class Model(Artifact):
  """A trained (or imported) encoder with its model config and vocabulary."""
  TYPE_NAME = "Model"


class ModelEvaluation(Artifact):
  """Metrics of one model on one task's evaluation split."""
  TYPE_NAME = "ModelEvaluation"


class ModelBlessing(Artifact):
  """Whether a model passed the configured metric thresholds (`properties["blessed"]`)."""
  TYPE_NAME = "ModelBlessing"


class SavedModel(Artifact):
  """A text-in TensorFlow SavedModel ready for serving."""
  TYPE_NAME = "SavedModel"


class PushedModel(Artifact):
  """Where (and whether) a SavedModel was pushed: `properties["pushed"]`, `["pushed_destination"]`."""
  TYPE_NAME = "PushedModel"
