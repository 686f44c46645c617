"""Runs the Evaluator component alone: `python -m components.evaluator.cli [flags]`, the same as
`python -m components.cli evaluator [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("evaluator")
