"""A component's spec as text, its CLI's `--help` and its README table row, rendered from the spec
itself so neither can drift from what is validated."""

from __future__ import annotations

import inspect
import json


def _summary(obj) -> str:
  doc = inspect.getdoc(obj) or ""
  return doc.splitlines()[0].strip() if doc else ""


def help_text(spec_class) -> str:
  lines = [f"{spec_class.__name__}: {inspect.getdoc(spec_class) or ''}".rstrip(), ""]
  lines.append("inputs (--input_artifact NAME=ARTIFACT_DIR):")
  for name, spec in spec_class.INPUTS.items():
    optional = "optional" if spec.optional else "required"
    lines.append(f"  {name} ({spec.type.TYPE_NAME}, {optional}): {_summary(spec.type)}")
  if not spec_class.INPUTS:
    lines.append("  none")
  lines.append("outputs (--output_artifact NAME=ARTIFACT_DIR, every one required):")
  for name, artifact_type in spec_class.OUTPUTS.items():
    lines.append(f"  {name} ({artifact_type.TYPE_NAME}): {_summary(artifact_type)}")
  lines.append("parameters (--param NAME=VALUE with VALUE as JSON, bare strings allowed; or "
               "--params_json=FILE):")
  for name, param in spec_class.PARAMETERS.items():
    default = "required" if param.required else f"default {json.dumps(param.default)}"
    path = ", path" if param.is_path else ""
    meaning = f": {param.doc}" if param.doc else ""
    lines.append(f"  {name} ({param.type.__name__}, {default}{path}){meaning}")
  if not spec_class.PARAMETERS:
    lines.append("  none")
  return "\n".join(lines) + "\n"


MAX_PARAMETERS_CELL = 160  # characters of README's parameters cell before it defers to --help


def markdown_row(component: str, spec_class) -> str:
  inputs = ", ".join(f"`{name}` ({spec.type.TYPE_NAME}{', optional' if spec.optional else ''})"
                     for name, spec in spec_class.INPUTS.items()) or "none"
  outputs = ", ".join(f"`{name}` ({artifact_type.TYPE_NAME})"
                      for name, artifact_type in spec_class.OUTPUTS.items())
  params = ", ".join(f"`{name}`" if param.required else f"`{name}={json.dumps(param.default)}`"
                     for name, param in spec_class.PARAMETERS.items()) or "none"
  if len(params) > MAX_PARAMETERS_CELL:  # a row stays readable; the CLI's --help lists them all
    required = [f"`{name}`" for name, param in spec_class.PARAMETERS.items() if param.required]
    params = ", ".join(required + [f"{len(spec_class.PARAMETERS) - len(required)} with defaults "
                                   f"(`--help` lists them)"])
  cells = [f"`{component}`", _summary(spec_class), inputs, outputs, params]
  return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def markdown_table(named_specs) -> str:
  """README's component table for `named_specs`, a sequence of (component name, spec class)."""
  rows = ["| component | what it does | inputs | outputs | parameters (`name=default`; bare `name`: "
          "required) |",
          "|---|---|---|---|---|"]
  rows += [markdown_row(component, spec_class) for component, spec_class in named_specs]
  return "\n".join(rows) + "\n"
