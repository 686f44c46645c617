"""python -m components.evaluator.cli [flags]: the same as `python -m components.cli evaluator [flags]`."""

from components.cli import run

if __name__ == "__main__":
  run("evaluator")
