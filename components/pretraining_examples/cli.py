"""python -m components.pretraining_examples.cli [flags]: the same as `python -m components.cli pretraining_examples [flags]`."""

from components.cli import run

if __name__ == "__main__":
  run("pretraining_examples")
