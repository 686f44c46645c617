"""TFX's shape (spec + executor + thin CLI, artifacts as directories, a cache keyed by inputs and
parameters) in a few hundred lines, TFX itself not being installable here."""
