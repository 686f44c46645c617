"""Runs the Pusher component alone: `python -m bert_keras.components.pusher.cli [flags]`, the same as
`python -m bert_keras.components.cli pusher [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("pusher")
