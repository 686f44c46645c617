"""Runs the CheckpointImporter component alone: `python -m components.checkpoint_importer.cli [flags]`, the same as
`python -m components.cli checkpoint_importer [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("checkpoint_importer")
