"""Runs a script in a fresh `python -I` process that cannot import this project, the way a user
loads an exported SavedModel with only tensorflow and tensorflow_text installed.

Keras stays importable: tensorflow 2.21 requires it (keras>=3.12), and `import tensorflow_text`
itself builds tf.keras layers, so with Keras made unimportable the tokenizer ops never load (the
SavedModel's own graphs use no Keras)."""

import os
import pickle
import subprocess
import sys
import textwrap

PROJECT_PACKAGES = ("bert_keras",)

# Put before the script's own code: any import of a project package fails, and `project_modules()`
# lists what got imported anyway (it must be nothing).
PRELUDE = textwrap.dedent("""
    import importlib.abc, pickle, sys

    _PROJECT = {packages!r}

    class _NoProject(importlib.abc.MetaPathFinder):
      def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in _PROJECT:
          raise ImportError("the project is not importable here: " + name)

    sys.meta_path.insert(0, _NoProject())

    def project_modules():
      return sorted(m for m in sys.modules if m.split(".")[0] in _PROJECT)
""").format(packages=PROJECT_PACKAGES)


def run_without_project(script: str, job, work) -> object:
  """Runs PRELUDE + `script` with `python -I`; the script reads `pickle.load(open(sys.argv[1]))`
  (the pickled `job`) and pickles its result to sys.argv[2]. Returns that result."""
  work = str(work)
  paths = [os.path.join(work, name) for name in ("loader.py", "job.pkl", "out.pkl")]
  with open(paths[0], "w", encoding="utf-8") as f:
    f.write(PRELUDE + textwrap.dedent(script))
  with open(paths[1], "wb") as f:
    pickle.dump(job, f)
  env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  run = subprocess.run([sys.executable, "-I", *paths], cwd=work, env=env, capture_output=True,
                       text=True, timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  with open(paths[2], "rb") as f:
    return pickle.load(f)
