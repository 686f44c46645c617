"""Runs the CheckpointImporter component alone (e.g. as one orchestrator step); see components/base/component_cli.py.

  python -m components.checkpoint_importer.cli --input NAME=ARTIFACT_DIR ... --output NAME=ARTIFACT_DIR \\
      --param NAME=VALUE ... [--force]
"""

from absl import app

from bert_keras.errors import parse_flags, run_main
from components.base import component_cli
from components.checkpoint_importer.spec import CheckpointImporterSpec


def main(argv):
  del argv
  return component_cli.run_from_flags(CheckpointImporterSpec)


if __name__ == "__main__":
  component_cli.define_flags(spec_class=CheckpointImporterSpec)
  app.run(run_main(main), flags_parser=parse_flags)
