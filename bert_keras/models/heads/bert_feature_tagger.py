"""The feature-based approach for NER (Devlin et al., 2018, section 5.3): no fine-tuning of BERT."""

from __future__ import annotations

import keras

from bert_keras.models.heads.bert_feature_head import BertFeatureHead


@keras.saving.register_keras_serializable(package="bert_keras")
class BertFeatureTagger(BertFeatureHead):
  """BertFeatureHead per token: `logits` float32 (batch, seq, K)."""

  PER_TOKEN = True
  OUTPUT_NAME = "tagger"
