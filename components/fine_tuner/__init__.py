"""Fine-tuner: one task's head on a pretrained encoder, all parameters trained (section 4)."""
