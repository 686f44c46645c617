"""LAMB with gradient accumulation: N micro-batches of B examples take the same steps as one batch
of N x B: under the default strategy 4 x 2 vs 8. (Two MirroredStrategy replicas accumulating 2 x 2
each vs the default strategy's 8 is test_lamb.py's, whose subprocess probe runs both replica
cases.)

LAMB's weights are blind to some accumulation errors: the clip (active here), Adam's normalisation
and the trust ratio undo a common scale of the gradient, so a sum of micro-batch means (4x the
gradient) would move the weights as the right one does. The default-strategy test therefore also
compares the accumulated gradient itself, before the clip and the update, with the big batch's.
The weights catch a gradient of the wrong direction: with a micro-batch left out they differ by
3.5e-2, with micro-batches divided by their own label counts instead of the batch's by 3.4e-2.
"""

import numpy as np
import pytest
import tensorflow as tf

from tests.training import lamb_probe
from tests.training.pretraining_records import write_records

# Two steps at lr 1e-2 (the weights move by up to 1.9e-2): float32 summation order only. Measured
# 1.2e-7, under the default strategy and with two replicas.
TOL = 2e-6


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=2, per_file=16)


def test_default_strategy_accumulation_equals_one_big_batch(pattern, tmp_path):
  cfg = lamb_probe.config(pattern)
  strategy = tf.distribute.get_strategy()
  big = lamb_probe.run(strategy, cfg, str(tmp_path / "big"), first_gradients=True)
  accumulated = lamb_probe.run(strategy, cfg, str(tmp_path / "accum"), accum=4,
                               first_gradients=True)
  assert big["optimizer"] == accumulated["optimizer"] == "Lamb"
  # The first step's gradient, summed over 4 micro-batches of 2, is the gradient of the batch of 8
  # (not 4x it, not one micro-batch's): float32 summation order only.
  scale = max(float(np.max(np.abs(g))) for g in big["gradients"].values())
  assert scale > 1e-3, scale
  grad_diff = {k: float(np.max(np.abs(big["gradients"][k] - accumulated["gradients"][k])))
               for k in big["gradients"]}
  assert max(grad_diff.values()) < TOL * scale, grad_diff
  moved = max(float(np.max(np.abs(big["final"][k] - big["initial"][k]))) for k in big["final"])
  assert moved > 1e-3, moved  # the steps really changed the weights
  for what in ("final", "slots"):
    diff = {k: float(np.max(np.abs(big[what][k] - accumulated[what][k]))) for k in big[what]}
    assert max(diff.values()) < TOL, (what, diff)
