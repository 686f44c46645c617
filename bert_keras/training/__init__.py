"""Training: optimizers and schedules, distribution strategies, the custom train loop."""
