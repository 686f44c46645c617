"""Every fenced code block of README.md with a language runs as written, read from the README at
test time (a diagram, a block without a language, is not code).

- python blocks run in a fresh interpreter that can import only tensorflow and tensorflow_text
  (as a user's notebook would), in a temporary working directory where every path the block names
  that ends in `_export` (or, after a flag's `=`, in `/export`: a GPT-1 fine-tuning's export, which
  a BERT classification export of the same inputs stands in for) holds a tiny untrained export of
  the kind its name says (squad, swag, conll, ..., see KIND_BY_NAME), with its `model.tflite` when
  the README names one: the code's calls and attribute reads are what is tested, not the answers.
- shell blocks run in bash, in the same directory, with every command checked, none skipped:
  `make X` runs as `make -n X` (the target exists and its recipe expands; demo and test take
  minutes); `python -c ...` (computing a value for a variable) runs as written; every other
  `python scripts/...` or `python -m ...` command runs as written with `--help` appended: the entry
  point exists and accepts every flag of ours as written (absl parses and checks every flag before
  it prints the help; the Beam scripts' argparse converts the values before `--help`, Beam's own
  options are then not checked). `scripts/predict.py`, cheap and with its input (the tiny export)
  in place, also runs as written (after the blocks, all of them in one process). `python -c` code
  is parsed, and run only when every module it imports is installed here and none is a Google
  Cloud client (google.cloud.*, e.g. aiplatform, which Beam's GCP extras install: its calls would
  reach Google Cloud): otherwise parsed only.
  `docker run [options] IMAGE CMD` checks CMD the same way here (the image is this repository);
  `docker build` / `push` need a daemon and a registry and are not run; `kfp ...` is not run (even its
  `--help` contacts the cluster first): the test checks that the pinned kfp CLI is installed.
Training, pretraining, Dataflow and TPU commands are only flag-checked: they need data, hours or
hardware a test does not have.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

# Four tiny exports and their loads: about a minute on a quiet 2-core machine, four under load.
pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
# Export kinds (tests/export/tiny_exports.py) by a word in the path's name; first match wins.
KIND_BY_NAME = (("squad", "squad"), ("swag", "multiple_choice"), ("conll", "tagging"),
                ("ner", "tagging"), ("stsb", "regression"), ("similarity", "regression"),
                ("mrpc", "pair_classification"), ("encoder", "encoder"),
                ("minilm", "encoder"), ("", "classification"))
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_EXPORT_PATH = re.compile(r"""["']([\w./-]*_export)["']""")
# Only tensorflow and tensorflow_text: the project's packages cannot be imported.
_SANDBOX = """
import importlib.abc, sys
class _NoProject(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path=None, target=None):
    if name.split(".")[0] in ("bert_keras", "tests"):
      raise ImportError("not importable in a user's environment: " + name)
sys.meta_path.insert(0, _NoProject())
exec(compile(open(sys.argv[1], encoding="utf-8").read(), "README.md block", "exec"), {})
"""


# Shell blocks run in bash with `python`, `make`, `docker` and `kfp` as functions (see the module
# docstring for what each checks).
_SHELL_PRELUDE = r"""set -euo pipefail
python() {
  if [ "$1" = "-c" ]; then
    "$PY" -c 'import ast, importlib.util, sys
tree = ast.parse(sys.argv[1])
wanted = [(a.name, None) for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
wanted += [(n.module, a.name) for n in ast.walk(tree)
           if isinstance(n, ast.ImportFrom) and n.module for a in n.names]
def available(module, name):
  try:
    found = importlib.import_module(module)
    return name is None or hasattr(found, name) or importlib.util.find_spec(
        module + "." + name) is not None
  except ImportError:
    return False
cloud = [m for m, _ in wanted if m == "google.cloud" or m.startswith("google.cloud.")]
sys.exit(3 if cloud or [w for w in wanted if not available(*w)] else 0)' "$2" || {
      [ $? -eq 3 ] && return 0; return 1; }
    "$PY" "$@"; return
  fi
  local target="$1"; shift
  if [ "$target" != "-m" ] && [ ! -e "$target" ]; then target="$ROOT/$target"; fi
  "$PY" "$target" "$@" --help > /dev/null
  case "$target" in */scripts/predict.py) printf '%s\0' "$PWD" "$@" $'\x1e' >> "$PREDICT_CALLS" ;; esac
}
make() { command make -C "$ROOT" -n "$@" > /dev/null; }
docker() {
  if [ "$1" != "run" ]; then return 0; fi  # build / push: need a daemon and a registry
  shift
  while [ "$#" -gt 0 ] && [ "${1#-}" != "$1" ]; do
    case "$1" in -v|-e|-w|--name) shift 2 ;; *) shift ;; esac
  done
  shift  # the image: this repository
  "$@"
}
kfp() {  # every kfp command, --help included, first contacts the cluster: only its CLI is checked
  [ -x "$(dirname "$PY")/kfp" ]
}
"""


def _blocks(language):
  with open(README, encoding="utf-8") as f:
    text = f.read()
  return [body for lang, body in _BLOCK.findall(text) if lang == language]


def _kind(path):
  name = os.path.basename(path).lower()
  return next(kind for word, kind in KIND_BY_NAME if word in name)


def _env():
  return dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
  """A working directory holding a tiny export for every `*_export` path the README names."""
  from tests.export import tiny_exports  # pylint: disable=import-outside-toplevel

  work = tmp_path_factory.mktemp("readme")
  vocab = tiny_exports.tokenizer()
  paths = {p for lang in ("python", "bash") for block in _blocks(lang)
           for p in _EXPORT_PATH.findall(block) + re.findall(r"=([\w./-]+[_/]export)\b", block)}
  readme = "".join(_blocks("python") + _blocks("bash"))
  made = {}  # kind -> the first path exported; others of that kind are copies (the same model)
  for path in sorted(paths):
    if _kind(path) in made:
      shutil.copytree(made[_kind(path)], work / path)
    else:
      made[_kind(path)] = tiny_exports.export(_kind(path), str(work / path), vocab)
    if f"{path}/model.tflite" in readme:  # --format=litert's file beside the SavedModel
      from bert_keras.export.litert_export import export_litert  # pylint: disable=import-outside-toplevel
      export_kind, model, options = tiny_exports.build(_kind(path), vocab)
      export_litert(model, export_kind, vocab, str(work / path / "model.tflite"), tiny_exports.SEQ,
                    **options)
  return work


def test_readme_has_code_blocks():
  assert _blocks("python") and _blocks("bash")


def test_python_blocks_run_as_written(workdir):
  for i, block in enumerate(_blocks("python")):
    script = workdir / f"block_{i}.py"
    script.write_text(block, encoding="utf-8")
    env = {k: v for k, v in _env().items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    run = subprocess.run([sys.executable, "-I", "-c", _SANDBOX, str(script)], cwd=workdir,
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"README python block {i}:\n{block}\n{run.stderr[-3000:]}"


# Runs the README's scripts/predict.py commands (recorded by the shell blocks: the directory, then
# the arguments, NUL-separated) as `python scripts/predict.py ...` runs each, one after the other in
# one process: flags parsed afresh each time, JSON lines expected on stdout.
_PREDICT = r"""
import contextlib, io, os, runpy, sys
from absl import app, flags
from bert_keras.errors import parse_flags, run_main
script = sys.argv[1]
predict = runpy.run_path(script, run_name="readme_predict")
for call in open(sys.argv[2], encoding="utf-8").read().split("\x1e\0")[:-1]:
  directory, *args = call.rstrip("\0").split("\0")
  os.chdir(directory)
  flags.FLAGS.unparse_flags()
  out, code = io.StringIO(), None
  try:
    with contextlib.redirect_stdout(out):
      app.run(run_main(predict["main"]), argv=[script] + args, flags_parser=parse_flags)
  except SystemExit as e:
    code = e.code
  if code or not out.getvalue().startswith("{"):
    print(f"failed (exit {code}): predict.py {' '.join(args)}", file=sys.stderr)
"""


def test_shell_blocks_commands_are_valid(workdir):
  calls = workdir / "predict_calls"
  calls.write_text("")
  for i, block in enumerate(_blocks("bash")):
    script = workdir / f"block_{i}.sh"
    script.write_text(_SHELL_PRELUDE + block, encoding="utf-8")
    run = subprocess.run(["bash", str(script)], cwd=workdir, capture_output=True, text=True,
                         timeout=900, env=dict(_env(), PY=sys.executable, ROOT=ROOT,
                                               PREDICT_CALLS=str(calls)))
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert run.returncode == 0 and not errors, (
        f"README bash block {i}:\n{block}\n{run.stderr[-3000:]}")
  assert calls.read_text().count("\x1e") >= 5  # the README's predict.py commands were recorded
  run = subprocess.run([sys.executable, "-c", _PREDICT, os.path.join(ROOT, "scripts", "predict.py"),
                        str(calls)], cwd=workdir, capture_output=True, text=True, timeout=900,
                       env=_env())
  failed = [line for line in run.stderr.splitlines() if line.startswith(("failed", "error:"))]
  assert run.returncode == 0 and not failed, run.stderr[-3000:]
