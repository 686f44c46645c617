"""Typed configs and named presets (model sizes, data, training, tasks, ablations)."""
