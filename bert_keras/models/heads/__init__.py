"""Task heads attached by composition to a BertEncoder (section 4: one new output layer per task)."""
