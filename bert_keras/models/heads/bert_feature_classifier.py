"""The feature-based approach (Devlin et al., 2018, section 5.3), applied to a sentence (pair) as the
paper applies it to NER: frozen features of chosen layers -> two BiLSTMs -> the output layer.
"""

from __future__ import annotations

import keras

from bert_keras.models.heads.bert_feature_head import BertFeatureHead


@keras.saving.register_keras_serializable(package="bert_keras")
class BertFeatureClassifier(BertFeatureHead):
  """Frozen encoder -> concat(encoder_outputs[feature_layers]) -> BiLSTM -> BiLSTM (last states)
  -> dense. Output `logits` float32 (batch, K); K=1 for regression. Constructor: BertFeatureHead."""

  PER_TOKEN = False
  OUTPUT_NAME = "classifier"
