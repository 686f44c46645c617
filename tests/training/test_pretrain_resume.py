"""SIGKILL at random points (five times), restart the same command: the run ends at the same
weights, optimizer state and step as an uninterrupted one (deterministic ops on CPU)."""

import os
import random
import re
import subprocess
import time

import pytest

from tests.training import pretraining_runs as runs
from tests.training.pretraining_records import write_records

STEPS = 12


@pytest.mark.slow
def test_five_sigkills_then_resume_match_an_uninterrupted_run(tmp_path):
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=48, seq_length=32,
                          max_predictions=5)
  # Dropout on: the restored seed-generator state must reproduce the same masks.
  runs.run(runs.tiny_flags(pattern, str(tmp_path / "straight"), STEPS))
  resumed_dir = str(tmp_path / "killed")
  cmd = runs.tiny_flags(pattern, resumed_dir, STEPS)
  rng = random.Random(1234)
  targets = sorted(rng.sample(range(1, STEPS - 1), 5))
  resumed_from = []
  for target in targets:
    proc = subprocess.Popen(cmd, env=runs.env(), stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
      m = re.search(r"resumed from \S+ at step (\d+)", line)
      if m:
        resumed_from.append(int(m.group(1)))
      m = re.search(r"step (\d+)(/| eval|: saved)", line)
      if m and int(m.group(1)) >= target:
        # Somewhere in the next few milliseconds: between steps, inside a save, inside a step.
        time.sleep(rng.uniform(0.0, 0.03))
        proc.kill()
        break
    proc.wait(timeout=300)
  runs.run(cmd)
  # At least two restarts found a checkpoint mid-run (a kill before the first save leaves none).
  assert len(resumed_from) >= 2, resumed_from
  straight = runs.read_checkpoint(str(tmp_path / "straight"))
  killed = runs.read_checkpoint(resumed_dir)
  assert int(killed["global_step/.ATTRIBUTES/VARIABLE_VALUE"]) == STEPS
  assert runs.max_difference(straight, killed) < 1e-6
  for name in ("encoder.weights.h5", "encoder.keras", "model_config.json"):
    assert os.path.exists(os.path.join(resumed_dir, "export", name))

