"""Corpus ingestion: Wikipedia dumps and text corpora -> one corpus in the Google BERT layout (ExampleGen)."""
