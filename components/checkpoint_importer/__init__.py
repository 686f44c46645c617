"""Checkpoint importer: brings an existing pretrained checkpoint into the pipeline as a Model (TFX Importer)."""
