"""Runs the Pretrainer component alone: `python -m components.pretrainer.cli [flags]`, the same as
`python -m components.cli pretrainer [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("pretrainer")
