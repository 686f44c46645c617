"""Exporter: a fine-tuned task Model -> a text-in TensorFlow SavedModel and/or a LiteRT model."""
