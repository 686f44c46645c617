from setuptools import setup

# Beam's --setup_file (Dataflow workers) needs a setup.py; the project metadata lives in pyproject.toml.
setup()
