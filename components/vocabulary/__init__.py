"""Vocabulary: learns a WordPiece vocabulary from a corpus."""
