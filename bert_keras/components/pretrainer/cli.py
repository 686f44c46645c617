"""Runs the Pretrainer component alone: `python -m bert_keras.components.pretrainer.cli [flags]`, the same as
`python -m bert_keras.components.cli pretrainer [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("pretrainer")
