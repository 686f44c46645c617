"""Runs the PretrainingExamples component alone: `python -m components.pretraining_examples.cli [flags]`, the same as
`python -m components.cli pretraining_examples [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("pretraining_examples")
