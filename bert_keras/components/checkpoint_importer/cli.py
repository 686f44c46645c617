"""Runs the CheckpointImporter component alone: `python -m bert_keras.components.checkpoint_importer.cli [flags]`, the same as
`python -m bert_keras.components.cli checkpoint_importer [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("checkpoint_importer")
