"""python -m components.exporter.cli [flags]: the same as `python -m components.cli exporter [flags]`."""

from components.cli import run

if __name__ == "__main__":
  run("exporter")
