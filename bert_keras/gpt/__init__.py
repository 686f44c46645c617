"""GPT-1 (Radford et al., 2018): BPE tokenizer, fine-tuning input transforms, losses and the studies."""
