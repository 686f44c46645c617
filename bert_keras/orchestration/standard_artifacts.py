"""The artifact types that flow through the pipeline (names follow TFX where TFX has one)."""

from __future__ import annotations

from bert_keras.orchestration.artifact import Artifact


def _artifact_type(name: str, doc: str) -> type:
  return type(name, (Artifact,), {"TYPE_NAME": name, "__doc__": doc})


Corpus = _artifact_type(
    "Corpus", "Documents in the Google BERT text layout: one sentence per line, blank line between "
    "documents.")
Vocabulary = _artifact_type("Vocabulary", "A WordPiece `vocab.txt` (one token per line, id = line number).")
Examples = _artifact_type(
    "Examples", "Serialized tf.train.Examples in TFRecord shards (pretraining instances).")
Model = _artifact_type("Model", "A trained (or imported) encoder with its model config and vocabulary.")
ModelEvaluation = _artifact_type("ModelEvaluation", "Metrics of one model on one task's evaluation split.")
ModelBlessing = _artifact_type(
    "ModelBlessing", "Whether a model passed the configured metric thresholds (`properties['blessed']`).")
SavedModel = _artifact_type("SavedModel", "A text-in TensorFlow SavedModel ready for serving.")
PushedModel = _artifact_type(
    "PushedModel", "Where (and whether) a SavedModel was pushed: `properties['pushed']`, "
    "`['pushed_destination']`.")
