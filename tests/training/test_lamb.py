"""--optimizer=lamb is the paper's LAMB (You et al. 2019): weights and slots after several steps
against an independent float64 numpy implementation (weight decay inside the trust ratio; biases and
LayerNorm weights neither decayed nor adapted; zero norms), which keras.optimizers.Lamb fails; the
project's schedule and clipping; sparse gradients; checkpoints; one Trainer step under the default
strategy and two replicas of a MirroredStrategy (subprocess probe: two logical CPUs), also each
replica accumulating micro-batches (the probe's one process serves both)."""

import json
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training.lamb import Lamb
from bert_keras.configs.training import OptimizerConfig
from bert_keras.training.optimization import create_optimizer
from tests.training import lamb_probe
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import ROOT, env

PEAK, TOTAL, WARMUP, CLIP = 1e-2, 6, 2, 1.0
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-6
STEPS = 5
# float32 against float64: a few float32 roundings per step, relative to each array's scale.
TOL = 1e-6


def lamb_reference(weights, steps, weight_decay, excluded, clip=None, beta_1=BETA_1,
                   beta_2=BETA_2, epsilon=EPSILON):
  """The paper's LAMB in float64, written from the formula.

  weights: {name: array}; steps: [(lr, {name: gradient})]; excluded: names neither decayed nor
  adapted. With `clip`, each step's gradients are first scaled to a global norm of at most `clip`.
  Returns (weights, m, v), dicts by name.
  """
  w = {k: np.asarray(a, np.float64) for k, a in weights.items()}
  m = {k: np.zeros_like(a) for k, a in w.items()}
  v = {k: np.zeros_like(a) for k, a in w.items()}
  for t, (lr, grads) in enumerate(steps, start=1):
    g = {k: np.asarray(a, np.float64) for k, a in grads.items()}
    if clip is not None:
      norm = np.sqrt(sum(np.sum(a * a) for a in g.values()))
      g = {k: a * min(1.0, clip / norm) for k, a in g.items()}
    for k in w:
      m[k] = beta_1 * m[k] + (1 - beta_1) * g[k]
      v[k] = beta_2 * v[k] + (1 - beta_2) * g[k] ** 2
      m_hat = m[k] / (1 - beta_1 ** t)
      v_hat = v[k] / (1 - beta_2 ** t)
      u = m_hat / (np.sqrt(v_hat) + epsilon)
      ratio = 1.0
      if k not in excluded:
        u = u + weight_decay * w[k]
        w_norm, u_norm = np.linalg.norm(w[k]), np.linalg.norm(u)
        ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
      w[k] = w[k] - lr * ratio * u
  return w, m, v


def linear_warmup_decay(step):
  """WarmupDecaySchedule(PEAK, TOTAL, WARMUP) in float64."""
  if step < WARMUP:
    return PEAK * step / WARMUP
  return PEAK * min(max((TOTAL - step) / (TOTAL - WARMUP), 0.0), 1.0)


def problem():
  """Initial weights and STEPS steps of gradients, by variable name.

  kernel: decayed and adapted. bias (non-zero) and gamma (near 1): excluded; a trust ratio or a
  decay on them moves them visibly. zero_kernel: ||w|| = 0 at the first step (ratio 1).
  frozen_kernel: zero weights and zero gradients, ||w|| = ||u|| = 0 throughout (ratio 1, no NaN).
  still_kernel: zero gradients, so ||u|| = 0 without weight decay (ratio 1: unchanged, no NaN) and
  u = wd w with it (ratio 1 / wd: w shrinks by the factor 1 - lr).
  The gradients' global norm exceeds CLIP at some steps and not at others.
  """
  rng = np.random.default_rng(0)
  weights = {"kernel": rng.normal(size=(3, 4)), "bias": rng.normal(scale=0.1, size=(4,)),
             "gamma": 1.0 + rng.normal(scale=0.1, size=(4,)), "zero_kernel": np.zeros((2, 3)),
             "frozen_kernel": np.zeros((2, 2)), "still_kernel": rng.normal(size=(2, 2))}
  weights = {k: a.astype(np.float32) for k, a in weights.items()}
  steps = []
  for i in range(STEPS):
    grads = {k: rng.normal(scale=0.3 * (i + 1), size=a.shape).astype(np.float32)
             for k, a in weights.items()}
    grads["frozen_kernel"] = grads["still_kernel"] = np.zeros((2, 2), np.float32)
    steps.append(grads)
  return weights, steps


def apply(optimizer, weights, steps):
  """Applies the steps to keras Variables named like the weights; returns (weights, m, v)."""
  variables = {k: keras.Variable(a, name=k) for k, a in weights.items()}
  for grads in steps:
    optimizer.apply_gradients([(tf.constant(grads[k]), variables[k]) for k in variables])
  slots = {v.path.split("/", 1)[-1]: v.numpy() for v in optimizer.variables}
  return ({k: v.numpy() for k, v in variables.items()},
          {k: slots[f"{k}_momentum"] for k in variables},
          {k: slots[f"{k}_velocity"] for k in variables})


def scaled_differences(got, want):
  """{name: max |got - want| / max |want|} (absolute when want is all zeros; NaN stays NaN)."""
  out = {}
  for k in want:
    scale = float(np.max(np.abs(want[k]))) or 1.0
    out[k] = float(np.max(np.abs(got[k] - want[k]))) / scale
  return out


def reference_for(weights, steps, weight_decay):
  schedule = [(linear_warmup_decay(i), g) for i, g in enumerate(steps)]
  return lamb_reference(weights, schedule, weight_decay, excluded={"bias", "gamma"}, clip=CLIP)


def lamb(weight_decay, keras_lamb=False):
  """What create_optimizer(optimizer_type="lamb") builds, or the Keras Lamb it used to build."""
  optimizer = create_optimizer(OptimizerConfig(
      optimizer="lamb", learning_rate=PEAK, num_train_steps=TOTAL, num_warmup_steps=WARMUP,
      epsilon=EPSILON, weight_decay_rate=weight_decay, clip_global_norm=CLIP))
  if keras_lamb:
    config = dict(optimizer.get_config(), learning_rate=optimizer._learning_rate)
    optimizer = keras.optimizers.Lamb(**{k: config[k] for k in (
        "learning_rate", "beta_1", "beta_2", "epsilon", "weight_decay", "global_clipnorm")})
    if weight_decay:
      optimizer.exclude_from_weight_decay(var_names=["bias", "beta", "gamma", "layer_norm"])
  return optimizer


@pytest.mark.parametrize("weight_decay", [0.1, 0.0])
def test_matches_the_paper_reference(weight_decay):
  weights, steps = problem()
  optimizer = lamb(weight_decay)
  assert type(optimizer) is Lamb and optimizer.name == "lamb"
  got = apply(optimizer, weights, steps)
  want = reference_for(weights, steps, weight_decay)
  for what, g, w in zip(("weights", "m", "v"), got, want):
    differences = scaled_differences(g, w)
    assert all(d <= TOL for d in differences.values()), (what, differences)  # NaN fails too
  moved = scaled_differences(got[0], {k: a.astype(np.float64) for k, a in weights.items()})
  assert min(moved[k] for k in ("kernel", "bias", "gamma", "zero_kernel")) > 1e-3, moved
  assert not np.any(got[0]["frozen_kernel"])  # 0 / 0 taken as ratio 1, not NaN
  if not weight_decay:  # ||w|| / 0 taken as ratio 1, not inf (inf * 0 = NaN)
    np.testing.assert_array_equal(got[0]["still_kernel"], weights["still_kernel"])


def test_keras_lamb_fails_the_reference():
  # keras.optimizers.Lamb: decay outside the trust ratio; the ratio also on bias and gamma.
  weights, steps = problem()
  got = apply(lamb(0.1, keras_lamb=True), weights, steps)[0]
  differences = scaled_differences(got, reference_for(weights, steps, 0.1)[0])
  assert min(differences[k] for k in ("kernel", "bias", "gamma")) > 100 * TOL, differences
  # Without decay it differs on the excluded variables only (the trust ratio applied to them).
  got = apply(lamb(0.0, keras_lamb=True), weights, steps)[0]
  differences = scaled_differences(got, reference_for(weights, steps, 0.0)[0])
  assert differences["kernel"] <= TOL and min(differences["bias"], differences["gamma"]) > 1e-2


def test_sparse_gradients_update_like_dense_ones():
  weights = {"embeddings": np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)}
  dense = keras.Variable(weights["embeddings"], name="embeddings")
  sparse = keras.Variable(weights["embeddings"], name="embeddings")
  dense_opt, sparse_opt = lamb(0.1), lamb(0.1)
  values = tf.constant([[0.5, -1.0, 2.0], [1.0, 1.0, -3.0]])
  for _ in range(3):
    gradient = tf.IndexedSlices(values, tf.constant([2, 0]), tf.constant([4, 3]))
    sparse_opt.apply_gradients([(gradient, sparse)])
    dense_opt.apply_gradients([(tf.convert_to_tensor(gradient), dense)])
  np.testing.assert_array_equal(sparse.numpy(), dense.numpy())
  assert not np.array_equal(dense.numpy()[1], weights["embeddings"][1])  # decayed, no gradient


def test_checkpoint_resume_and_config_round_trip(tmp_path):
  weights, steps = problem()
  uninterrupted = apply(lamb(0.1), weights, steps)
  # 2 steps, save, restore into a fresh optimizer and variables, the rest: the same result.
  optimizer = lamb(0.1)
  variables = {k: keras.Variable(a, name=k) for k, a in weights.items()}
  for grads in steps[:2]:
    optimizer.apply_gradients([(tf.constant(grads[k]), variables[k]) for k in variables])
  prefix = tf.train.Checkpoint(model=variables, optimizer=optimizer).save(str(tmp_path / "ckpt"))
  # Keras optimizers checkpoint their slots by position: m and v for each variable.
  assert sum(name.startswith("optimizer/_variables/")
             for name, _ in tf.train.list_variables(prefix)) == 2 * len(weights)
  resumed = lamb(0.1)
  fresh = {k: keras.Variable(np.zeros_like(a), name=k) for k, a in weights.items()}
  resumed.build(list(fresh.values()))
  restored = tf.train.Checkpoint(model=fresh, optimizer=resumed).restore(prefix)
  restored.assert_existing_objects_matched()
  assert int(resumed.iterations.numpy()) == 2
  for grads in steps[2:]:
    resumed.apply_gradients([(tf.constant(grads[k]), fresh[k]) for k in fresh])
  for k in weights:
    np.testing.assert_array_equal(fresh[k].numpy(), uninterrupted[0][k], err_msg=k)
  # Keras Lamb's slots have the same names: its checkpoints restore into this optimizer.
  keras_opt = lamb(0.1, keras_lamb=True)
  old = {k: keras.Variable(a, name=k) for k, a in weights.items()}
  keras_opt.apply_gradients([(tf.constant(steps[0][k]), old[k]) for k in old])
  old_prefix = tf.train.Checkpoint(model=old, optimizer=keras_opt).save(str(tmp_path / "old"))
  into = lamb(0.1)
  into.build(list(fresh.values()))
  restored = tf.train.Checkpoint(model=fresh, optimizer=into).restore(old_prefix)
  restored.assert_existing_objects_matched()
  # Serialization keeps the class, the schedule and the hyperparameters.
  optimizer = lamb(0.1)
  again = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
  assert type(again) is Lamb and again.get_config() == optimizer.get_config()


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=2, per_file=16)


def test_trainer_step_default_strategy_matches_the_reference(pattern, tmp_path):
  """build_optimizer + Trainer, one step: the reference applied to the Trainer's own gradients
  (clipped by it), biases and LayerNorm weights excluded; the checkpoint holds the slots."""
  cfg = lamb_probe.config(pattern)
  out = lamb_probe.run(tf.distribute.get_strategy(), cfg, str(tmp_path), steps=1,
                       first_gradients=True)
  assert out["optimizer"] == "Lamb"
  used = {k: a for k, a in out["initial"].items() if k not in out["unused"]}
  excluded = {k for k in used if k.rsplit("/", 1)[-1] in ("bias", "output_bias", "gamma", "beta")}
  assert any("layer_norm/gamma" in k for k in excluded) and len(excluded) < len(used)
  want = lamb_reference(used, [(cfg.optimizer.learning_rate, out["gradients"])], cfg.optimizer.weight_decay_rate,
                        excluded, clip=cfg.optimizer.clip_global_norm, beta_1=cfg.optimizer.beta_1,
                        beta_2=cfg.optimizer.beta_2, epsilon=cfg.optimizer.epsilon)[0]
  differences = scaled_differences({k: out["final"][k] for k in used}, want)
  assert all(d <= 1e-5 for d in differences.values()), differences
  for k in out["unused"]:
    np.testing.assert_array_equal(out["final"][k], out["initial"][k])
  names = [name for name, _ in tf.train.list_variables(out["checkpoint"])]
  assert sum(n.startswith("optimizer/_variables/") for n in names) == 2 * len(out["initial"])


@pytest.fixture(scope="module")
def mirrored(pattern, tmp_path_factory):
  """lamb_probe's report: a subprocess, as two logical CPUs must be configured before TensorFlow
  starts."""
  done = subprocess.run([sys.executable, "-m", "tests.training.lamb_probe", pattern,
                         str(tmp_path_factory.mktemp("mirrored"))], env=env(), cwd=ROOT,
                        capture_output=True, text=True, timeout=900)
  assert done.returncode == 0, done.stderr[-3000:]
  result = json.loads(done.stdout.strip().splitlines()[-1])
  assert result["num_replicas"] == 2, result
  assert result["moved"] > 1e-3, result  # the steps really changed the weights
  return result


@pytest.mark.slow
def test_mirrored_strategy_matches_the_default_strategy(mirrored):
  result = mirrored["replicas"]
  assert result["optimizers"] == ["Lamb", "Lamb"], result
  # Two replicas' all-reduced, clipped gradients vs one device's: float32 summation order only.
  assert result["weights_diff"] < 2e-6 and result["slots_diff"] < 2e-6, result


@pytest.mark.slow
def test_mirrored_strategy_accumulation_equals_one_big_batch(mirrored):
  # 2 replicas x 2 micro-batches vs 8 examples at once (the default strategy's accumulation:
  # test_lamb_accumulation.py): float32 summation order only.
  result = mirrored["accumulation"]
  assert result["optimizers"] == ["Lamb", "Lamb"], result
  assert result["weights_diff"] < 2e-6 and result["slots_diff"] < 2e-6, result
