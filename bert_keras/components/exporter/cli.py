"""Runs the Exporter component alone: `python -m bert_keras.components.exporter.cli [flags]`, the same as
`python -m bert_keras.components.cli exporter [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("exporter")
