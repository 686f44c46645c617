"""The small TFX-shaped framework: artifacts, component specs, executors, fingerprints, launcher.

TFX itself is not installable here, so the project carries its shape (spec + executor + thin CLI per
component, artifacts as directories with metadata, a cache keyed by inputs and parameters) in a few
hundred lines, while the heavy work runs on real engines (Beam, tf.distribute).
"""
