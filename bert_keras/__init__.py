"""BERT and GPT-1 on TensorFlow 2 / Keras 3: models, tokenization, data, training, tasks, export."""
