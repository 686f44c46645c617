"""Keras layers and models: the Transformer encoder, its heads and task models.

The reference implementation (Keras layers and keras.ops), which every device runs by default. The
Trainer and the exporter may run the same models through faster CPU implementations of their
layers, chosen by name in bert_keras/kernels/__init__.py.
"""
