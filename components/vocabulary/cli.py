"""python -m components.vocabulary.cli [flags]: the same as `python -m components.cli vocabulary [flags]`."""

from components.cli import run

if __name__ == "__main__":
  run("vocabulary")
