"""Runs the Evaluator component alone: `python -m bert_keras.components.evaluator.cli [flags]`, the same as
`python -m bert_keras.components.cli evaluator [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("evaluator")
