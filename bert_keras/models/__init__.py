"""Keras layers and models, the reference implementation every device runs (faster CPU versions of
the same layers: bert_keras/kernels/)."""
