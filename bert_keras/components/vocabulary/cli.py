"""Runs the Vocabulary component alone: `python -m bert_keras.components.vocabulary.cli [flags]`, the same as
`python -m bert_keras.components.cli vocabulary [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("vocabulary")
