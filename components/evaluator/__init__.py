"""Evaluator: a fine-tuned model's metrics on its task's dev split, and a blessing (TFX Evaluator)."""
