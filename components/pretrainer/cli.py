"""Runs the Pretrainer component alone (e.g. as one orchestrator step); see components/base/component_cli.py.

  python -m components.pretrainer.cli --input NAME=ARTIFACT_DIR ... --output NAME=ARTIFACT_DIR \\
      --param NAME=VALUE ... [--force]
"""

from absl import app

from bert_keras.errors import parse_flags, run_main
from components.base import component_cli
from configs.training import DISTRIBUTIONS
from components.pretrainer.spec import PretrainerSpec


def main(argv):
  del argv
  return component_cli.run_from_flags(PretrainerSpec)


if __name__ == "__main__":
  # Every strategy but tpu, which needs an address this CLI does not take (run_pretraining.py has
  # --tpu); multi_worker_mirrored reads the cluster from TF_CONFIG.
  component_cli.define_flags(tuple(d for d in DISTRIBUTIONS if d != "tpu"), spec_class=PretrainerSpec)
  app.run(run_main(main), flags_parser=parse_flags)
