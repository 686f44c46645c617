"""Runs the FineTuner component alone: `python -m components.fine_tuner.cli [flags]`, the same as
`python -m components.cli fine_tuner [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("fine_tuner")
