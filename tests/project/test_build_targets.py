"""The Bazel BUILD files, read by Bazel itself.

`bazel query 'deps(//..., 1)'` loads every package of this repository and resolves every label its
targets name: a syntax error, an unknown rule, a duplicate name, or a label naming a missing package
or a missing target in another package fails the query with the BUILD file and line. What Bazel only
finds when it builds is checked here from the query's answer: every file a target names exists, deps
name rules, every Python module has a target, and test files are py_test targets. Package
`__init__.py` files are left out: Bazel's Python rules create them.

Only this repository's graph is queried: --noimplicit_deps leaves out the toolchains every Python rule
depends on, and --experimental_repository_disable_download makes any reference to an external
repository that must be downloaded fail ("download is disabled") instead of reaching the network.
Debian's bazel-bootstrap (4.2.3) runs offline; .ci/run installs it.
"""

import os
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_DIRS = ("bert_keras", "components", "pipeline", "configs", "tests", "scripts", "bench", "studies")

pytestmark = pytest.mark.skipif(
    shutil.which("bazel") is None,
    reason="bazel is not on PATH; install it with `apt-get install bazel-bootstrap` (Debian)")


def _bazel_graph(workspace, output_user_root):
  """(errors, rules, source_files) of `workspace` as Bazel reads it.

  errors: Bazel's error lines, empty when every package loads and every label resolves;
  rules: {label: (rule class, {"srcs"|"deps"|"data": [labels]})}; source_files: labels of files.
  """
  # --batch: no Bazel server outlives the query; the output root holds nothing worth keeping.
  run = subprocess.run(
      ["bazel", f"--output_user_root={output_user_root}", "--batch", "--nohome_rc", "query",
       "--experimental_repository_disable_download", "--noimplicit_deps", "--keep_going",
       "--noshow_progress", "--output=xml", "deps(//..., 1)"],
      cwd=workspace, capture_output=True, text=True, timeout=300)
  errors = []
  if run.returncode:
    errors = [line for line in run.stderr.splitlines()
              if not line.startswith(("OpenJDK 64-Bit Server VM warning", "WARNING: --keep_going"))]
  if not run.stdout:
    pytest.fail(f"bazel query printed nothing (exit {run.returncode}):\n{run.stderr}")
  rules, source_files = {}, set()
  for element in ElementTree.fromstring(run.stdout):
    if element.tag == "rule":
      attrs = {attr.get("name"): [label.get("value") for label in attr]
               for attr in element.findall("list") if attr.get("name") in ("srcs", "deps", "data")}
      rules[element.get("name")] = (element.get("class"), attrs)
    elif element.tag == "source-file":
      source_files.add(element.get("name"))
  return errors, rules, source_files


def _path(workspace, label):
  package, _, name = label[2:].partition(":")
  return os.path.join(workspace, package, name)


def _unbuildable(workspace, rules, source_files):
  """What `bazel build` would refuse that a query accepts: missing files, deps that are no rule."""
  problems = []
  for label, (_, attrs) in sorted(rules.items()):
    for dep in attrs.get("deps", []):
      if dep in source_files:  # a label Bazel took for a file: no target of that name
        problems.append(f"{label}: deps names {dep}, which is no rule")
    for src in attrs.get("srcs", []) + attrs.get("data", []):
      if src in source_files and not os.path.isfile(_path(workspace, src)):
        problems.append(f"{label}: names {src}, which does not exist")
  return problems


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
  return _bazel_graph(ROOT, tmp_path_factory.mktemp("bazel"))


def _python_files():
  for top in ("",) + PY_DIRS:
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
      dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
      for filename in filenames:
        if filename.endswith(".py") and filename != "__init__.py":
          yield os.path.relpath(os.path.join(dirpath, filename), ROOT)
      if top == "":
        break


def test_bazel_loads_every_package_and_resolves_every_label(graph):
  errors, rules, source_files = graph
  problems = errors + _unbuildable(ROOT, rules, source_files)
  assert not problems, "\n".join(problems)
  assert rules, "bazel query found no targets"


def test_every_python_file_has_a_target(graph):
  _, rules, _ = graph
  covered = {os.path.relpath(_path(ROOT, src), ROOT)
             for _, attrs in rules.values() for src in attrs.get("srcs", [])}
  missing = sorted(set(_python_files()) - covered)
  assert not missing, f"Python files with no BUILD target: {missing}"


def test_test_files_are_py_test(graph):
  _, rules, _ = graph
  for label, (rule_class, attrs) in sorted(rules.items()):
    for src in attrs.get("srcs", []):
      name = src.partition(":")[2]
      if label.startswith("//tests") and os.path.basename(name).startswith("test_"):
        assert rule_class == "py_test", f"{label}: test file {name} must be a py_test, not a {rule_class}"


def test_bazel_query_reports_labels_that_name_nothing(tmp_path):
  workspace = tmp_path / "workspace"
  (workspace / "lib").mkdir(parents=True)
  (workspace / "other").mkdir()
  (workspace / "WORKSPACE").write_text("")
  (workspace / "lib" / "a.py").write_text("")
  (workspace / "other" / "c.py").write_text("")
  (workspace / "lib" / "BUILD").write_text(
      'py_library(name = "a", srcs = ["a.py"], deps = ["//nowhere:x", "//other:gone", ":typo"])\n'
      'py_library(name = "b", srcs = ["b.py"])\n')
  (workspace / "other" / "BUILD").write_text('py_library(name = "c", srcs = ["c.py"])\n')

  errors, rules, source_files = _bazel_graph(workspace, tmp_path / "bazel")

  text = "\n".join(errors)
  assert "no such package 'nowhere'" in text and "referenced by '//lib:a'" in text, text
  assert "no such target '//other:gone'" in text, text
  assert _unbuildable(workspace, rules, source_files) == [
      "//lib:a: deps names //lib:typo, which is no rule",
      "//lib:b: names //lib:b.py, which does not exist",
  ]
