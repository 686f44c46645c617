"""Reverses each row's real tokens in place: the right-to-left half of an ELMo-style encoder pair.

The ELMo-style variant of the ablation study (BERT section 5.1) runs a causal encoder on the
reversed input and reverses its states back, so both directions line up token by token. A layer of
its own, apart from the study's training code, so that loading a .keras file holding it
(`bert_keras.keras_classes`) imports no more than the layer.
"""

import keras
import tensorflow as tf
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class ReverseRealTokens(keras.layers.Layer):
  """(batch, seq[, H]) reversed within each row's real length; padding stays at the right."""

  def call(self, x, input_mask):
    lengths = ops.sum(ops.cast(input_mask, "int32"), axis=1)
    return tf.reverse_sequence(x, tf.cast(lengths, tf.int64), seq_axis=1, batch_axis=0)
