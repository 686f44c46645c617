"""Two MultiWorkerMirroredStrategy workers on 127.0.0.1 with different model_dirs, one holding a
checkpoint: both stop with an error naming their model_dir and steps, instead of training the
chief's weights with the other worker's fresh ones. Nothing is written to the worker's model_dir."""

import json
import os
import subprocess

import pytest

from tests.training import pretraining_runs as runs
from tests.training.pretraining_records import write_records
from bert_keras.configs.training import TrainingConfig


@pytest.mark.slow
def test_workers_with_different_model_dirs_refuse_to_resume(tmp_path):
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=24, seq_length=32,
                          max_predictions=5)
  dirs = [str(tmp_path / "chief"), str(tmp_path / "worker")]
  runs.run(runs.tiny_flags(pattern, dirs[0], 2, num_layers=1))  # one process: checkpoint 2
  ports = runs.free_ports(2)
  procs = [subprocess.Popen(runs.tiny_flags(pattern, d, 4, num_layers=1,
                                             distribution_strategy="multi_worker_mirrored"),
                            env=runs.env(runs.cluster(ports, i)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
           for i, d in enumerate(dirs)]
  errors = []
  try:
    for p in procs:
      errors.append(p.communicate(timeout=300)[1])
  except subprocess.TimeoutExpired:
    pytest.fail("a worker hung instead of stopping")
  finally:
    for p in procs:
      if p.poll() is None:
        p.kill()
        p.wait(timeout=60)
  for p, d, err in zip(procs, dirs, errors):
    assert p.returncode != 0, err[-3000:]
    assert "all workers must share one model_dir" in err and d in err, err[-3000:]
    assert "steps from 0 to 2" in err, err[-3000:]
  assert not os.path.exists(dirs[1])
  with open(os.path.join(dirs[0], "training_config.json"), encoding="utf-8") as f:
    assert TrainingConfig.flat_values(json.load(f))["num_train_steps"] == 2  # nested, read flat
