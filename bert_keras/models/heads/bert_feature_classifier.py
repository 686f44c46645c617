"""The feature-based approach (Devlin et al., 2018, section 5.3) on a sentence (pair)."""

from __future__ import annotations

import keras

from bert_keras.models.heads.bert_feature_head import BertFeatureHead


@keras.saving.register_keras_serializable(package="bert_keras")
class BertFeatureClassifier(BertFeatureHead):
  """BertFeatureHead over the last states: `logits` float32 (batch, K); K=1 for regression."""

  PER_TOKEN = False
  OUTPUT_NAME = "classifier"
