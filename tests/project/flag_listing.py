"""Prints, as JSON, the flags every entry point defines: {entry point: {flag: kind}}.

Run in a fresh process by test_flag_vocabulary.py (each absl script defines its flags into the one
global FLAGS, so they are listed and removed one script at a time). Nothing is run and TensorFlow
is not imported: absl scripts are imported under a module name of their own; argparse scripts run
as `__main__` until their parser is asked to parse; scripts whose imports are heavy (TensorFlow,
scikit-learn, Model Garden at the top) and scripts that read sys.argv themselves are read as source.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import runpy
import sys

from absl import app, flags, logging  # noqa: F401  (their own flags, defined before any script's)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS = flags.FLAGS


class _Listed(Exception):
  """Raised in place of parsing, once the parser is known."""


# pylint: disable=protected-access
def _argparse_kind(action: argparse.Action) -> str:
  type_name = getattr(action.type, "__name__", None)
  if type_name == "parse_bool" or isinstance(action, (argparse._StoreTrueAction,
                                                      argparse.BooleanOptionalAction)):
    return "bool"
  if isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*"):
    return "list"
  return {None: "string", "str": "string", "int": "int", "float": "float"}.get(type_name, type_name)


def _argparse_flags(parser: argparse.ArgumentParser) -> dict:
  return {option[2:]: _argparse_kind(action) for action in parser._actions
          for option in action.option_strings
          if option.startswith("--") and action.help != argparse.SUPPRESS
          and not isinstance(action, argparse._HelpAction)}
# pylint: enable=protected-access


def _absl_flags(before: set) -> dict:
  """The flags defined since `before` (the names FLAGS held), which are then removed."""
  found = {name: FLAGS[name].flag_type() for name in set(FLAGS) - before}
  for name in found:
    delattr(FLAGS, name)
  return found


def _run_until_parsed(path: str) -> dict:
  """The flags of the argparse parser `path` builds when run with no argument."""
  parsers = []

  def listed(self, *args, **kwargs):
    del args, kwargs
    parsers.append(self)
    raise _Listed()

  real = argparse.ArgumentParser.parse_known_args
  argparse.ArgumentParser.parse_known_args = listed
  sys.argv = [path]
  try:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
      runpy.run_path(path, run_name="__main__")
  except (_Listed, SystemExit):
    pass
  finally:
    argparse.ArgumentParser.parse_known_args = real
  return _argparse_flags(parsers[0]) if parsers else {}


def _read_source(path: str) -> dict:
  """The `add_argument("--name", ...)` calls of `path`, read without importing it."""
  found = {}
  for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
    if (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"
        and node.args and isinstance(node.args[0], ast.Constant)
        and str(node.args[0].value).startswith("--")):
      keywords = {k.arg: k.value for k in node.keywords}
      kind = "string"
      if "type" in keywords:
        kind = getattr(keywords["type"], "id", "string")
        kind = "bool" if kind == "parse_bool" else {"str": "string"}.get(kind, kind)
      if getattr(keywords.get("action"), "value", "") in ("append", "store_true"):
        kind = "list" if keywords["action"].value == "append" else "bool"
      found[node.args[0].value[2:]] = kind
  return found


def entry_points() -> dict:
  """{entry point (path from the root): how to list its flags}."""
  listed = {}
  for folder in ("scripts", "pipeline", "bench", "studies/bert_gpt_ablation",
                 "studies/pretraining_evidence"):
    for name in sorted(os.listdir(os.path.join(ROOT, folder))):
      path = os.path.join(folder, name)
      if not name.endswith(".py") or name == "__init__.py":
        continue
      source = open(os.path.join(ROOT, path), encoding="utf-8").read()
      if "__main__" not in source or name == "definitions.py":
        continue
      if "flags.DEFINE" in source and folder != "studies/pretraining_evidence":
        listed[path] = "absl"
      elif "argparse" in source and folder != "studies/pretraining_evidence":
        listed[path] = "argparse"
      else:  # reads sys.argv itself (bench/check_graphs.py): running it would run its checks
        listed[path] = "source"
  return listed


def main() -> None:
  sys.path[:0] = [ROOT, os.path.join(ROOT, "bench")]
  out = {}
  for i, (path, how) in enumerate(entry_points().items()):
    full = os.path.join(ROOT, path)
    if how == "absl":
      before = set(FLAGS)
      runpy.run_path(full, run_name=f"flag_listing_{i}")
      out[path] = _absl_flags(before)
    elif how == "argparse":
      out[path] = _run_until_parsed(full)
    else:
      out[path] = _read_source(full)
  from bert_keras.orchestration import component_cli  # pylint: disable=import-outside-toplevel
  before = set(FLAGS)
  component_cli.define_flags(("default",))
  out["components/cli.py"] = _absl_flags(before)
  print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
  main()
