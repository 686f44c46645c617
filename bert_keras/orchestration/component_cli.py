"""The thin absl CLI every component shares (`python -m components.cli NAME --input_artifact
a=DIR --output_artifact b=DIR --param k=v`), with the pipeline runner's cache; `--help` is
rendered from the spec.
"""

from __future__ import annotations

import json
import sys

from absl import flags

from bert_keras.errors import UserError, split_args
from bert_keras.json_io import read_json_file
from bert_keras.orchestration.base_executor import ExecutionContext
from bert_keras.orchestration.component_launcher import FAILED, ComponentLauncher
from bert_keras.orchestration.spec_help import help_text

FLAGS = flags.FLAGS


def define_flags(distributions, spec_class=None) -> None:
  """The flags every component CLI takes. With `spec_class`, absl's `--help` (the `__main__`
  docstring and its key flags) describes that component."""
  defined = [
      flags.DEFINE_multi_string("input_artifact", [], "name=artifact_dir, one per input."),
      flags.DEFINE_multi_string("output_artifact", [], "name=artifact_dir, one per output."),
      flags.DEFINE_multi_string("param", [], "name=value; value is JSON (bare strings allowed)."),
      flags.DEFINE_string("params_json", None, "A JSON file of parameters (--param overrides it)."),
      flags.DEFINE_bool("force", False, "Rerun even when the cache holds this execution."),
      flags.DEFINE_string("beam_pipeline_args", "", "Options for Beam components, one string."),
      flags.DEFINE_enum("distribution_strategy", "default", list(distributions),
                        "tf.distribute strategy for trainers.")]
  if spec_class is not None:
    main = sys.modules["__main__"]
    # absl formats the docstring with `%`: a literal percent sign is written `%%`.
    main.__doc__ = f"{(main.__doc__ or '').rstrip()}\n\n{help_text(spec_class).replace('%', '%%')}"
    for holder in defined:
      FLAGS.register_key_flag_for_module(sys.argv[0], FLAGS[holder.name])


def _pairs(values, flag):
  out = {}
  for item in values:
    name, sep, value = item.partition("=")
    if not sep or not name:
      raise UserError(f"--{flag}={item!r}: expected name=value")
    out[name] = value
  return out


def parse_param_value(text: str):
  """JSON when it parses, else the bare string (paths, names)."""
  try:
    return json.loads(text)
  except json.JSONDecodeError:
    return text
  except RecursionError:
    raise UserError(f"parameter value nested too deeply: {text[:40]!r}...") from None


def _check_names(flag, given, declared) -> None:
  unknown = sorted(set(given) - set(declared))
  if unknown:
    expected = f"expected one of {sorted(declared)}" if declared else "this component takes none"
    raise UserError(f"--{flag} {', '.join(unknown)}: unknown {flag.removesuffix('_artifact')}; "
                    f"{expected} (see --help)")


def run_from_flags(spec_class) -> int:
  parameters = {}
  if FLAGS.params_json:
    parameters = read_json_file(FLAGS.params_json, "parameters file", expected=dict)
  parameters.update({k: parse_param_value(v) for k, v in _pairs(FLAGS.param, "param").items()})
  component = spec_class.__name__.removesuffix("Spec").lower()
  spec_class.check_parameter_names(parameters, where=component)
  input_uris = _pairs(FLAGS.input_artifact, "input_artifact")
  _check_names("input_artifact", input_uris, spec_class.INPUTS)
  outputs = _pairs(FLAGS.output_artifact, "output_artifact")
  _check_names("output_artifact", outputs, spec_class.OUTPUTS)
  missing = sorted(set(spec_class.OUTPUTS) - set(outputs))
  if missing:
    raise UserError(f"missing --output_artifact for {missing}")
  inputs = {name: spec_class.INPUTS[name].type.load(uri) for name, uri in input_uris.items()}
  context = ExecutionContext(beam_pipeline_args=split_args(FLAGS.beam_pipeline_args,
                                                          "beam_pipeline_args"),
                             distribution_strategy=FLAGS.distribution_strategy)
  launcher = ComponentLauncher(spec_class, component, inputs, outputs, parameters, context=context)
  result = launcher.launch(force=FLAGS.force)
  if result.status == FAILED:
    if not isinstance(result.exception, UserError):
      raise result.exception  # a bug, not bad input: its traceback and exit status 1
    raise UserError(result.error)
  for name, artifact in result.outputs.items():
    print(f"{result.status}: {name} -> {artifact.uri} {json.dumps(artifact.metrics)}")
  return 0

