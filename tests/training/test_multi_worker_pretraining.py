"""MultiWorkerMirroredStrategy on two local workers (127.0.0.1, free ports, TF_CONFIG):
identical weights on both workers, the same loss curve as one worker with the same global batch,
with and without gradient accumulation, and a worker killed mid-run rejoins from the last
checkpoint.

The records are real: 24 news articles of the embedded Lee corpus through
scripts/create_pretraining_data.py (the uncased WordPiece vocabulary cut to the pieces of that
text, see write_real_records), made once for the module.
Nine TensorFlow process starts in all (two workers, one worker, two accumulating workers, two
killed, two restarted), so the runs are as small as the checks allow: one layer (collectives,
checkpoints and restores do not depend on depth) and six steps (a kill after checkpoint 4 leaves
two steps to rejoin for)."""

import os
import re
import subprocess
import time

import pytest

from tests.training import pretraining_runs as runs
from tests.training.pretraining_records import write_real_records

STEPS = 6


def _start(cmd, ports, index):
  return subprocess.Popen(cmd, env=runs.env(runs.cluster(ports, index)), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)


def _flags(data, model_dir, **extra):
  """`data`: (records glob, vocabulary size) of `write_real_records`."""
  pattern, vocab_size = data
  # No dropout: a one-worker run draws its masks over the whole batch, two workers over halves.
  return runs.tiny_flags(pattern, model_dir, STEPS, dropout=0.0, num_layers=1,
                         vocab_size=vocab_size, distribution_strategy="multi_worker_mirrored", **extra)


def _two_workers(cmd, timeout=600):
  ports = runs.free_ports(2)
  procs = [_start(cmd, ports, i) for i in (0, 1)]
  for p in procs:
    _, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]


@pytest.fixture(scope="module")
def two_worker_run(tmp_path_factory):
  root = tmp_path_factory.mktemp("mwms")
  data = write_real_records(str(root / "data"), seq_length=32, max_predictions=5)
  model_dir = str(root / "two")
  _two_workers(_flags(data, model_dir))
  return data, root, model_dir


@pytest.fixture(scope="module")
def one_worker_run(two_worker_run):
  """One worker, the same global batch of 8 (the reference of the two-worker runs)."""
  data, root, _ = two_worker_run
  one_dir = str(root / "one")
  runs.run(_flags(data, one_dir))
  return one_dir


def _check_matches_one_worker(model_dir, one_dir):
  """Both workers bit-identical; the loss curve and weights of the one-worker run."""
  chief = runs.read_checkpoint(model_dir)
  other = runs.read_checkpoint(os.path.join(model_dir, ".worker_1"))
  assert runs.max_difference(chief, other) == 0.0  # bit-identical replicas
  two, one = runs.train_losses(model_dir), runs.train_losses(one_dir)
  assert sorted(two) == list(range(1, STEPS + 1)) and sorted(one) == sorted(two)
  for step in two:
    assert abs(two[step] - one[step]) < 1e-4 * abs(one[step]), (step, two[step], one[step])
  assert runs.max_difference(chief, runs.read_checkpoint(one_dir)) < 1e-4


@pytest.mark.slow
def test_two_workers_agree_and_match_one_worker(two_worker_run, one_worker_run):
  _, _, model_dir = two_worker_run
  _check_matches_one_worker(model_dir, one_worker_run)


@pytest.mark.slow
def test_two_workers_accumulating_match_one_worker(two_worker_run, one_worker_run):
  """Each worker sums 2 micro-batches of 2 before the all-reduce: the global batch of 8 is the
  one worker's, so are the losses and weights (float32 summation order apart)."""
  data, root, _ = two_worker_run
  model_dir = str(root / "accumulating")
  _two_workers(_flags(data, model_dir, gradient_accumulation_steps=2))
  _check_matches_one_worker(model_dir, one_worker_run)


@pytest.mark.slow
def test_killed_worker_rejoins_from_the_last_checkpoint(two_worker_run):
  data, root, reference_dir = two_worker_run
  model_dir = str(root / "killed")
  cmd = _flags(data, model_dir)
  ports = runs.free_ports(2)
  chief, worker = _start(cmd, ports, 0), _start(cmd, ports, 1)
  for line in worker.stderr:
    m = re.search(r"step (\d+): saved", line)
    if m and int(m.group(1)) >= 4:
      worker.kill()  # SIGKILL mid-run
      break
  worker.wait(timeout=60)
  # The chief cannot finish its collectives without the worker; a cluster manager restarts the
  # job. Give it a moment, then stop it too (it may already have failed).
  time.sleep(2)
  chief.kill()
  chief.wait(timeout=60)
  # Restart both with the same command.
  ports = runs.free_ports(2)
  procs = [_start(cmd, ports, i) for i in (0, 1)]
  logs = []
  for p in procs:
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    logs.append(err)
  for log in logs:
    m = re.search(r"resumed from \S+ckpt-(\d+) at step (\d+)", log)
    assert m and int(m.group(2)) >= 4, log[-2000:]
  assert runs.max_difference(runs.read_checkpoint(model_dir),
                             runs.read_checkpoint(reference_dir)) < 1e-6
