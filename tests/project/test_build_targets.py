"""Keeps the Bazel BUILD files honest, since Bazel itself cannot run offline here.

Every Python module, test and script has a target; every target's srcs exist; every `//pkg:name`
dependency names a target that exists. Package `__init__.py` files are left out: Bazel's Python
rules create them.
"""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_DIRS = ("bert_keras", "tests", "scripts", "bench", "studies")
RULES = ("py_library", "py_test", "py_binary")


def _build_files():
  for top in ("",) + PY_DIRS:
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
      dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
      if "BUILD" in filenames:
        yield os.path.relpath(dirpath, ROOT), os.path.join(dirpath, "BUILD")
      if top == "":
        break


def _targets():
  """{package: {name: (rule, [srcs], [deps])}} parsed from every BUILD file (Starlark subset)."""
  packages = {}
  for package, path in _build_files():
    package = "" if package == "." else package
    with open(path) as f:
      tree = ast.parse(f.read(), filename=path)
    targets = packages.setdefault(package, {})
    for node in ast.walk(tree):
      if isinstance(node, ast.Call) and getattr(node.func, "id", None) in RULES:
        kwargs = {k.arg: k.value for k in node.keywords}
        name = ast.literal_eval(kwargs["name"])
        srcs = ast.literal_eval(kwargs.get("srcs", ast.List(elts=[])))
        deps = ast.literal_eval(kwargs.get("deps", ast.List(elts=[])))
        assert name not in targets, f"{path}: duplicate target {name!r}"
        targets[name] = (node.func.id, srcs, deps)
  return packages


def _python_files():
  for top in PY_DIRS:
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
      dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
      for filename in filenames:
        if filename.endswith(".py") and filename != "__init__.py":
          yield os.path.relpath(os.path.join(dirpath, filename), ROOT)


def test_every_python_file_has_a_target():
  covered = set()
  for package, targets in _targets().items():
    for _, srcs, _ in targets.values():
      covered.update(os.path.normpath(os.path.join(package, src)) for src in srcs)
  missing = sorted(set(_python_files()) - covered)
  assert not missing, f"Python files with no BUILD target: {missing}"


def test_every_src_exists_and_tests_are_py_test():
  for package, targets in _targets().items():
    for name, (rule, srcs, _) in targets.items():
      for src in srcs:
        path = os.path.join(ROOT, package, src)
        assert os.path.isfile(path), f"//{package}:{name} names missing file {src}"
        if os.path.basename(src).startswith("test_") and rule != "py_test" and package.startswith("tests"):
          raise AssertionError(f"//{package}:{name}: test file {src} must be a py_test")


def test_every_dependency_label_resolves():
  packages = _targets()
  for package, targets in packages.items():
    for name, (_, _, deps) in targets.items():
      for dep in deps:
        if not dep.startswith("//") and not dep.startswith(":"):
          continue  # external (pip) requirement labels
        if dep.startswith(":"):
          dep_package, dep_name = package, dep[1:]
        else:
          dep_package, _, dep_name = dep[2:].partition(":")
          dep_name = dep_name or os.path.basename(dep_package)
        assert dep_package in packages, f"//{package}:{name} depends on {dep}: no BUILD there"
        assert dep_name in packages[dep_package], (
            f"//{package}:{name} depends on {dep}: no target {dep_name!r} in //{dep_package}")
