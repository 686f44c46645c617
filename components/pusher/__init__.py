"""Pusher: copies a blessed SavedModel to `<serving_dir>/<model_name>/<version>/` (TFX Pusher)."""
