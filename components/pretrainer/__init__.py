"""Pretrainer: trains a BERT encoder with masked LM + next sentence prediction."""
