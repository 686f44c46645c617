"""The tfds paths (`run_finetuning --data_dir=tfds:...`, `create_pretraining_data
--input_format=tfds`) import tensorflow-datasets (importlib_resources is pinned for it) and, without
a network, fail at once with one line naming the dataset, exit 2. The network is cut by an
unreachable proxy, so nothing downloads even on a machine that has one."""

import os
import subprocess
import sys
import time

from bert_keras import resources

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OFFLINE = {name: "http://127.0.0.1:9" for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy",
                                                    "http_proxy")}


def _run(args, tmp_path):
  env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **OFFLINE)
  env.pop("NO_PROXY", None)
  env.pop("no_proxy", None)
  start = time.monotonic()
  run = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
  return run, time.monotonic() - start


def test_glue_from_tfds_without_network_is_one_line(tmp_path):
  run, seconds = _run([os.path.join(ROOT, "scripts", "run_finetuning.py"), "--task=glue/mrpc",
                       f"--data_dir=tfds:{tmp_path / 'tfds'}", "--model=bert_tiny",
                       f"--vocab_file={resources.uncased_vocab_path()}",
                       f"--output_dir={tmp_path / 'out'}"], tmp_path)
  errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
  assert run.returncode == 2 and len(errors) == 1, run.stderr[-3000:]
  assert "tfds dataset 'glue/mrpc'" in errors[0] and "no network" in errors[0], errors
  assert "Traceback" not in run.stderr
  assert seconds < 120, seconds  # tfds's own retries take about four minutes


def test_pretraining_data_from_tfds_without_network_is_one_line(tmp_path):
  run, _ = _run([os.path.join(ROOT, "scripts", "create_pretraining_data.py"),
                 "--input_format=tfds", "--input_files=lm1b", f"--tfds_data_dir={tmp_path / 'tfds'}",
                 f"--output_dir={tmp_path / 'out'}", "--direct_running_mode=in_memory"], tmp_path)
  errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
  assert run.returncode == 2 and len(errors) == 1, run.stderr[-3000:]
  assert "tfds dataset 'lm1b'" in errors[0], errors
  assert "Traceback" not in run.stderr
