"""Exporter: a fine-tuned task Model -> a text-in TensorFlow SavedModel for serving."""
