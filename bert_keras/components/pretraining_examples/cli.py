"""Runs the PretrainingExamples component alone: `python -m bert_keras.components.pretraining_examples.cli [flags]`, the same as
`python -m bert_keras.components.cli pretraining_examples [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("pretraining_examples")
