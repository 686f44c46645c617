"""Keras layers and models: the Transformer encoder, its heads and task models."""
