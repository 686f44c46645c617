"""Runs the Pusher component alone: `python -m components.pusher.cli [flags]`, the same as
`python -m components.cli pusher [flags]` (components/cli.py)."""

from components.cli import run

if __name__ == "__main__":
  run("pusher")
