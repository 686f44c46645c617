"""Every script in bench/ runs end to end at tiny sizes, as users run it (a subprocess with flags),
so none rots unnoticed. Peers run only when their virtualenv (or keras-hub's lib) is already there:
the smoke runs never install anything."""

import json
import os
import subprocess
import sys

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BENCH = os.path.join(_ROOT, "bench")
_VENVS = os.path.join(_BENCH, ".venvs")


def _has(*path):
  return os.path.exists(os.path.join(_VENVS, *path))


def _run(script, *flags):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
             PYTHONPATH=os.pathsep.join([_ROOT, os.environ.get("PYTHONPATH", "")]))
  done = subprocess.run([sys.executable, os.path.join(_BENCH, script), *flags], env=env,
                        capture_output=True, text=True, timeout=600, check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return done.stdout


def test_bench_scripts_are_all_covered():
  scripts = sorted(f for f in os.listdir(_BENCH) if f.startswith("bench_") and f.endswith(".py"))
  with open(__file__, encoding="utf-8") as f:
    source = f.read()
  assert [s for s in scripts if f'"{s}"' not in source] == []


def test_bench_pretraining_data(tmp_path):
  peer = ["--peer_scales=1"] if _has("tfm", "bin", "python") else ["--peer_scales="]
  out = _run("bench_pretraining_data.py", "--scales=1", "--modes=in_memory", "--dupe_factor=1",
             "--max_documents=3", f"--output_dir={tmp_path}", *peer)
  row = next(line for line in out.splitlines() if line.startswith("ours, DirectRunner in_memory"))
  assert int(row.split()[-1]) > 0  # instances written


def test_bench_pretraining(tmp_path):
  systems = ["ours"] + (["keras_hub"] if _has("khub_lib", "keras_hub") else []) + (
      ["model_garden"] if _has("tfm", "bin", "python") else [])
  out_json = tmp_path / "out.json"
  _run("bench_pretraining.py", "--shapes=tiny", "--steps=1", "--rounds=1", "--no-gemms",
       "--probe_sizes=256", f"--systems={','.join(systems)}", f"--output_file={out_json}")
  rows = json.loads(out_json.read_text())["rows"]
  assert {r["system"] for r in rows} == set(systems)
  assert all(r["seq_per_s"] > 0 for r in rows)


def test_bench_serving(tmp_path):
  out_json = tmp_path / "out.json"
  _run("bench_serving.py", "--models=bert_tiny", "--seq_length=16", "--tf_threads=default",
       "--variants=graph", "--batch_size=2", "--latency_runs=2", "--throughput_runs=1",
       "--rounds=1", f"--torch={_has('torch', 'bin', 'python')}", f"--output_file={out_json}")
  rows = json.loads(out_json.read_text())["shapes"]["bert_tiny"]["rows"]
  assert rows["text-in SavedModel (graph)"]["seq_per_s"] > 0
  assert rows["ids-in SavedModel (graph)"]["seq_per_s"] > 0


def test_bench_serving_real(tmp_path):
  out_json = tmp_path / "out.json"
  _run("bench_serving_real.py", "--models=bert_tiny", "--seq_length=32", "--batch_size=4",
       "--workloads=short,mixed", "--variants=buckets", "--runs=2", "--batch_runs=1",
       "--rounds=1", "--tf_threads=1/2", "--torch_threads=1",
       f"--torch={_has('torch', 'bin', 'python')}", f"--output_file={out_json}")
  result = json.loads(out_json.read_text())
  assert result["tf_threads"].startswith("1/2 ")  # TF's pools as set, read back
  if _has("torch", "bin", "python"):  # torch's pool as set, read back in its process
    assert result["models"]["bert_tiny"]["torch_threads"] == 1
  calls = result["models"]["bert_tiny"]["first_calls"]
  rows = calls["text-in SavedModel (buckets)"]
  # Every warm-up call counted once, under its batch size and a bucket of the export (16, 24, 32).
  assert sum(r["calls"] for r in rows) == 200 + 200 // 4
  assert {(r["batch"], r["bucket"]) for r in rows} <= {
      (batch, bucket) for batch in (1, 4) for bucket in (16, 24, 32)}
  assert all(r["first_ms"] > 0 for r in rows)


def test_bench_serving_real_classifier(tmp_path):
  out_json = tmp_path / "out.json"
  _run("bench_serving_real.py", "--models=bert_tiny", "--head=classifier", "--seq_length=32",
       "--workloads=short", "--variants=buckets", "--runs=2", "--rounds=1",
       f"--torch={_has('torch', 'bin', 'python')}", f"--output_file={out_json}")
  result = json.loads(out_json.read_text())
  assert result["head"] == "classifier"
  assert result["models"]["bert_tiny"]["rows"]["text-in SavedModel (buckets)"]["short"][
      "p50_ms"] > 0


def test_bench_finetune_lengths(tmp_path):
  # bert_tiny, randomly initialised: the script's two modes and report, not MiniLM's loading (the
  # interop tests load the real checkpoint).
  out_json = tmp_path / "out.json"
  _run("bench_finetune_lengths.py", "--tasks=polarity", "--seeds=0", "--num_epochs=polarity=2",
       "--max_seq_length=polarity=32", "--max_train_examples=16", "--model=bert_tiny",
       f"--output_file={out_json}")
  runs = json.loads(out_json.read_text())["polarity"]
  assert len(runs["auto"]) == len(runs["fixed"]) == 1
  assert 0.0 <= runs["auto"][0]["metric"] <= 100.0  # task metrics are on the 0-100 scale
  assert runs["fixed"][0]["batch_lengths"] == [32]  # fixed padding: the overridden length
  assert max(runs["auto"][0]["batch_lengths"]) <= 32
  out = _run("bench_finetune_lengths.py", "--tasks=polarity", "--model=bert_tiny",
             "--step_lengths=8,16")
  costs = out.splitlines()[-2].split()  # "8: <ms>  16: <ms>"
  assert costs[0] == "8:" and costs[2] == "16:" and float(costs[1]) > 0 and float(costs[3]) > 0
  assert out.splitlines()[-1].startswith("least squares: ")


@pytest.mark.parametrize("flag", ["--max_seq_length=polarity=12x", "--num_epochs=squad_v1=2",
                                  "--num_epochs=polarity"])
def test_bench_finetune_lengths_bad_override(flag):
  env = dict(os.environ, PYTHONPATH=_ROOT)
  done = subprocess.run([sys.executable, os.path.join(_BENCH, "bench_finetune_lengths.py"),
                         "--tasks=polarity", flag], env=env, capture_output=True, text=True,
                        timeout=120, check=False)
  assert done.returncode == 2
  assert done.stderr.strip().splitlines() == [
      f"error: {flag.split('=')[0]}: {flag.split('=', 1)[1]!r}; expected task=value for a task "
      "of --tasks"]


def test_bench_finetune_lengths_bad_buckets():
  env = dict(os.environ, PYTHONPATH=_ROOT)
  done = subprocess.run([sys.executable, os.path.join(_BENCH, "bench_finetune_lengths.py"),
                         "--tasks=polarity", "--length_buckets=32,16"], env=env,
                        capture_output=True, text=True, timeout=120, check=False)
  assert done.returncode == 2
  assert done.stderr.strip().splitlines() == [
      "error: --length_buckets=[32, 16]: expected ascending lengths >= 3"]


def test_bench_tokenizer():
  out = _run("bench_tokenizer.py", "--threads=1", "--batch_sizes=64", "--max_lines=200")
  rows = [line for line in out.splitlines() if line.startswith(("hf tokenizers", "ours", "python"))]
  assert len(rows) == 3
  assert all(line.split()[-1] == "200/200" or line.split()[-1].endswith("/200") for line in rows)
