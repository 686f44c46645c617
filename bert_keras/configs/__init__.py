"""Typed configs and named presets (model sizes, data, training, tasks, ablations, pipeline, export).

Every config derives from `bert_keras.configs.base.Config` (to and from dicts and JSON, unknown keys refused,
renamed keys accepted with a deprecation warning).
"""
