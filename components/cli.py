"""Runs one component alone (e.g. as one orchestrator step): its spec's inputs, outputs and
parameters as flags, the same cache and atomic outputs as the pipeline runner.

  python -m components.cli NAME --input_artifact NAME=ARTIFACT_DIR ... \\
      --output_artifact NAME=ARTIFACT_DIR \\
      --param NAME=VALUE ... [--params_json FILE] [--force] [--beam_pipeline_args="..."]

NAME is one of SPECS; `--help` after it lists that component's artifacts and parameters
(bert_keras/orchestration/component_cli.py does the work).
"""

from __future__ import annotations

import importlib
import sys

from absl import app

from bert_keras.errors import UserError, parse_flags, run_main
from bert_keras.orchestration import component_cli
from bert_keras.configs.training import DISTRIBUTIONS, FINETUNE_DISTRIBUTIONS

# Every component by its name, in pipeline order (pipeline/definitions.py), as "module:SpecClass":
# only the spec of the component run is imported.
SPECS = {
    "corpus_ingestion": "components.corpus_ingestion.spec:CorpusIngestionSpec",
    "vocabulary": "components.vocabulary.spec:VocabularySpec",
    "pretraining_examples": "components.pretraining_examples.spec:PretrainingExamplesSpec",
    "pretrainer": "components.pretrainer.spec:PretrainerSpec",
    "checkpoint_importer": "components.checkpoint_importer.spec:CheckpointImporterSpec",
    "fine_tuner": "components.fine_tuner.spec:FineTunerSpec",
    "evaluator": "components.evaluator.spec:EvaluatorSpec",
    "exporter": "components.exporter.spec:ExporterSpec",
    "pusher": "components.pusher.spec:PusherSpec",
}

# The --distribution_strategy choices where they are not those fine-tuning supports (the default):
# the pretrainer takes every strategy but tpu, which needs an address this CLI does not take
# (run_pretraining.py has --tpu); multi_worker_mirrored reads the cluster from TF_CONFIG.
_DISTRIBUTIONS = {"pretrainer": tuple(d for d in DISTRIBUTIONS if d != "tpu")}


def spec_class(name: str):
  """The spec class of the component called `name`; UserError naming the known ones."""
  if name not in SPECS:
    raise UserError(f"unknown component {name!r}; expected one of {list(SPECS)}")
  module, _, cls = SPECS[name].partition(":")
  return getattr(importlib.import_module(module), cls)


def step_arguments(spec) -> list[str]:
  """The arguments after `python` that run component `spec` (a spec class) as one orchestrator step."""
  name = next(n for n, ref in SPECS.items() if ref == f"{spec.__module__}:{spec.__name__}")
  return ["-m", "components.cli", name]


def run(name: str) -> None:
  """Defines the flags of component `name`, parses the command line and runs it (never returns)."""
  spec = spec_class(name)
  component_cli.define_flags(_DISTRIBUTIONS.get(name, FINETUNE_DISTRIBUTIONS), spec_class=spec)

  def main(argv):
    del argv
    return component_cli.run_from_flags(spec)

  app.run(run_main(main), flags_parser=parse_flags)


def run_named(argv: list) -> None:
  """`python -m components.cli NAME [flags]`: NAME is taken off `argv` (sys.argv, which absl
  parses next), then `run(NAME)`."""
  usage = f"usage: python -m components.cli NAME [flags]; NAME is one of {list(SPECS)}"
  if len(argv) == 2 and argv[1] in ("--help", "-h", "--helpfull"):
    print(usage + "\n`python -m components.cli NAME --help` lists one component's flags.")
    sys.exit(0)
  if len(argv) < 2 or argv[1].startswith("-"):
    raise UserError(usage)
  run(argv.pop(1))


if __name__ == "__main__":
  run_main(run_named)(sys.argv)
