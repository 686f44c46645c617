"""Serving runtimes that need no TensorFlow (LiteRT)."""
