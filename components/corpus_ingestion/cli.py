"""Runs the CorpusIngestion component alone: `python -m components.corpus_ingestion.cli [flags]`, the same as
`python -m components.cli corpus_ingestion [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("corpus_ingestion")
