"""Serving for multiple choice, SWAG (Devlin et al., 2018, section 4.4)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export.serving_module import (ServingModule, batched_function, single_or_batch,
                                              strings, text_input)


class MultipleChoiceServing(ServingModule):
  """context, endings (batch, choices) -> `probabilities` (batch, choices), `choice` (batch,);
  each `[CLS] context [SEP] ending_k [SEP]` as in training, any number of choices."""

  def __init__(self, model, tokenizer, max_seq_length: int, **kwargs):
    super().__init__("multiple_choice", model, tokenizer, max_seq_length, **kwargs)
    self._serve_text = batched_function(self._serve_batch, strings(None), strings(None, None))

  tokenized_rank = 3

  def _outputs(self, inputs):
    logits = tf.cast(self._run_model(inputs)["logits"], tf.float32)  # (batch, choices)
    return {"probabilities": tf.nn.softmax(logits, axis=-1),
            "choice": tf.argmax(logits, axis=-1, output_type=tf.int32)}

  def _serve_batch(self, context, endings):
    batch, choices = tf.shape(endings)[0], tf.shape(endings)[1]
    # The context is tokenized once and repeated for each of its endings.
    contexts = tf.gather(self.tokenize(context), tf.repeat(tf.range(batch), choices))
    packed = self.to_bucket(self.packer([contexts, self.tokenize(tf.reshape(endings, [-1]))]))
    shape = tf.stack([batch, choices, tf.shape(packed["input_word_ids"])[1]])
    return self._outputs({name: tf.reshape(value, shape) for name, value in packed.items()})

  @tf.function(input_signature=[text_input("context"), text_input("endings")], autograph=False)
  def _serve(self, context, endings):
    """context: string (batch,); endings: string (batch, choices). Or a scalar and (choices,)."""
    return single_or_batch(self._serve_text, {"context": context, "endings": endings},
                           extra_axes={"endings": 1})
