"""Runs the Evaluator component alone (e.g. as one orchestrator step); see components/base/component_cli.py.

  python -m components.evaluator.cli --input NAME=ARTIFACT_DIR ... --output NAME=ARTIFACT_DIR \\
      --param NAME=VALUE ... [--force]
"""

from absl import app

from bert_keras.errors import parse_flags, run_main
from components.base import component_cli
from components.evaluator.spec import EvaluatorSpec


def main(argv):
  del argv
  return component_cli.run_from_flags(EvaluatorSpec)


if __name__ == "__main__":
  component_cli.define_flags(spec_class=EvaluatorSpec)
  app.run(run_main(main), flags_parser=parse_flags)
