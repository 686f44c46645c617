"""The feature-based approach (Devlin et al., 2018, section 5.3) for sentence-level tasks.

Section 5.3 applies it to NER (BertFeatureTagger); the same recipe classifies a sentence (pair):
frozen encoder features of chosen layers (default the last four, concatenated) feed a two-layer
BiLSTM whose final forward and backward states go to the output layer. This lets the embedded
real polarity / similarity sets compare feature-based and fine-tuned BERT on the same data.
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
