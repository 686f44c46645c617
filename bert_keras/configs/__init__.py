"""Typed config schemas (each a `base.Config`) and the library's presets; recipes: top-level configs/."""
