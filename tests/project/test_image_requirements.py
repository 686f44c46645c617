"""The component image (Dockerfile) holds what the library runs on (with Beam's GCP extras) and no
more, and runs as an unprivileged user; `make test` installs the same GCP extras and adds the test
and benchmark packages (requirements-test.txt)."""

import ast
import importlib.metadata
import os
import re
import subprocess
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(name):
  with open(os.path.join(ROOT, name), encoding="utf-8") as f:
    return f.read()


def _pinned(requirements_file):
  """{normalised distribution name} of a requirements file's `name==version` lines."""
  return {re.split(r"[=<>\[]", line)[0].strip().lower().replace("_", "-")
          for line in _read(requirements_file).splitlines()
          if line.strip() and not line.startswith(("#", "-"))}


def _image_requirement_files():
  return re.findall(r"-r\s+(\S+)", " ".join(
      line for line in _read("Dockerfile").replace("\\\n", " ").splitlines()
      if line.startswith("RUN")))


def _imported_by_library():
  """{distribution name} of every third-party module bert_keras/ imports."""
  modules = set()
  for dirpath, _, filenames in os.walk(os.path.join(ROOT, "bert_keras")):
    for filename in filenames:
      if filename.endswith(".py"):
        with open(os.path.join(dirpath, filename), encoding="utf-8") as f:
          tree = ast.parse(f.read())
        for node in ast.walk(tree):
          if isinstance(node, ast.Import):
            modules.update(a.name.split(".")[0] for a in node.names)
          elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module.split(".")[0])
  by_module = importlib.metadata.packages_distributions()
  return {d.lower().replace("_", "-") for m in modules for d in by_module.get(m, ())}


def test_the_image_installs_the_runtime_requirements_only():
  files = _image_requirement_files()
  assert {"requirements.txt", "requirements-gcp.txt"} <= set(files), files
  assert "requirements-test.txt" not in files, files
  installed = set().union(*(_pinned(f) for f in files))
  test_only = _pinned("requirements-test.txt")
  assert {"pytest", "pytest-xdist", "hypothesis", "tokenizers", "psutil"} <= test_only
  assert not installed & test_only, sorted(installed & test_only)
  # Nothing the library imports is left to the test requirements, but an optional extra's
  # packages (pyproject's optional-dependencies: the LiteRT runtime), which the tests install.
  extras = _optional_dependencies()
  assert extras <= test_only, sorted(extras - test_only)
  assert not (_imported_by_library() & test_only) - extras, sorted(
      (_imported_by_library() & test_only) - extras)


def _optional_dependencies():
  """{normalised distribution name} of every extra in pyproject.toml."""
  with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
    extras = tomllib.load(f)["project"].get("optional-dependencies", {})
  return {re.split(r"[=<>\[ ]", spec)[0].lower().replace("_", "-")
          for specs in extras.values() for spec in specs}


def test_the_image_runs_as_an_unprivileged_user():
  users = re.findall(r"^USER\s+(\S+)", _read("Dockerfile"), re.MULTILINE)
  assert users and users[-1].split(":")[0] not in ("root", "0"), users


def test_make_test_installs_the_test_requirements():
  recipe = subprocess.run(["make", "-C", ROOT, "-n", "-B", "test"], capture_output=True,
                          text=True, check=True).stdout
  assert "-r requirements-test.txt" in recipe
  assert "-r requirements-gcp.txt" in recipe  # as the image: tests/data/test_dataflow_translation.py
  demo = subprocess.run(["make", "-C", ROOT, "-n", "-B", "demo"], capture_output=True,
                        text=True, check=True).stdout
  assert "-r requirements.txt" in demo and "requirements-test.txt" not in demo
