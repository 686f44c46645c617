"""Runs the Pusher alone: python -m components.pusher.cli --input saved_model=DIR
--input blessing=DIR --output pushed_model=DIR --param serving_dir=DIR"""

from absl import app

from bert_keras.errors import parse_flags, run_main
from components.base import component_cli
from components.pusher.spec import PusherSpec


def main(argv):
  del argv
  return component_cli.run_from_flags(PusherSpec)


if __name__ == "__main__":
  component_cli.define_flags(spec_class=PusherSpec)
  app.run(run_main(main), flags_parser=parse_flags)
