"""Gradient accumulation under a two-replica MirroredStrategy equals one big batch on one device,
for MLM+NSP and for the left-to-right LM (subprocess probe: two logical CPUs)."""

import json
import subprocess
import sys


from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import ROOT, env


def test_mirrored_accumulation_equals_one_big_batch(tmp_path):
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=16)
  done = subprocess.run([sys.executable, "-m", "tests.training.mirrored_accumulation_probe",
                         pattern, str(tmp_path / "runs")], env=env(), cwd=ROOT,
                        capture_output=True, text=True, timeout=900)
  assert done.returncode == 0, done.stderr[-3000:]
  results = json.loads(done.stdout.strip().splitlines()[-1])
  assert set(results) == {"mlm_nsp", "ltr"}
  for objective, r in results.items():
    assert r["moved"] > 1e-3, (objective, r)  # the two steps really changed the weights
    # 2 replicas x 2 micro-batches vs 8 examples at once: float32 summation order only.
    assert r["accum_vs_big"] < 2e-6, (objective, r)
