"""The CLI of the tiny test components (tests/pipeline/tiny_components.py), which components/cli.py
does not list: `python -m tests.pipeline.tiny_cli SourceSpec --output_artifact number=DIR ...`
takes the spec's class name first, then the flags every component CLI takes."""

from absl import app

from bert_keras.errors import parse_flags, run_main
from bert_keras.errors import UserError
from bert_keras.orchestration import component_cli
from tests.pipeline import tiny_components


def main(argv):
  if len(argv) != 2 or not hasattr(tiny_components, argv[1]):
    raise UserError(f"expected one tiny component spec name, got {argv[1:]}")
  return component_cli.run_from_flags(getattr(tiny_components, argv[1]))


if __name__ == "__main__":
  component_cli.define_flags(("default",))
  app.run(run_main(main), flags_parser=parse_flags)
