"""Runs the Exporter component alone: `python -m components.exporter.cli [flags]`, the same as
`python -m components.cli exporter [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("exporter")
