"""Runs the CorpusIngestion component alone: `python -m bert_keras.components.corpus_ingestion.cli [flags]`, the same as
`python -m bert_keras.components.cli corpus_ingestion [flags]` (bert_keras/components/cli.py)."""

from bert_keras.components.cli import run

if __name__ == "__main__":
  run("corpus_ingestion")
