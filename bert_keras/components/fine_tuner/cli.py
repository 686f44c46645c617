"""Runs the FineTuner component alone: `python -m bert_keras.components.fine_tuner.cli [flags]`, the same as
`python -m bert_keras.components.cli fine_tuner [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("fine_tuner")
