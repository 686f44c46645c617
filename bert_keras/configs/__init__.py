"""Typed config schemas and the presets the library needs (model sizes, tasks); recipes are in the
top-level configs/. Every config derives from `bert_keras.configs.base.Config` (to and from dicts
and JSON, unknown keys refused with their path, types and ranges checked)."""
