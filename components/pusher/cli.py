"""python -m components.pusher.cli [flags]: the same as `python -m components.cli pusher [flags]`."""

from components.cli import run

if __name__ == "__main__":
  run("pusher")
