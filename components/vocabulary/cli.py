"""Runs the Vocabulary component alone: `python -m components.vocabulary.cli [flags]`, the same as
`python -m components.cli vocabulary [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("vocabulary")
