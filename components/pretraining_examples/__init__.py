"""Pretraining examples: masked-LM + next-sentence instances as TFRecords, with Beam."""
