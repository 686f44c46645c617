"""The feature-based approach for NER (Devlin et al., 2018, section 5.3): no fine-tuning of BERT."""

from __future__ import annotations

import keras

from bert_keras.models.heads.bert_feature_head import BertFeatureHead


@keras.saving.register_keras_serializable(package="bert_keras")
class BertFeatureTagger(BertFeatureHead):
  """Frozen encoder -> concat(encoder_outputs[feature_layers]) -> 2 x BiLSTM -> dense per token.

  Output `logits` float32 (batch, seq, K). Constructor: see BertFeatureHead.
  """

  PER_TOKEN = True
  OUTPUT_NAME = "tagger"
