"""The Trainer's optimizer step against an independent reference written from the paper.

test_trainer.py and test_mirrored_accumulation.py check the Trainer against ITSELF (N micro-batches
== one batch of N*B through the Trainer). Here the same initial weights and batches go through
(a) the real Trainer (BertPretrainer + create_optimizer's FusedAdamW + clipping + accumulation) and
(b) a reference that shares only the model's forward pass and does everything else in float64 NumPy:
  loss  = sum(w * xent_mlm) / sum(w) over the whole global batch + mean NSP xent  (section 3.1)
  g     = gradient of that loss;  g <- g * min(1, 1 / ||g||_global)              (released code)
  lr    = peak * t / W for t < W, then peak * (1 - (t - W) / (T - W))           (appendix A.2)
  w    <- w - lr * wd * w for kernels and embeddings only (no LayerNorm gamma/beta, no bias)
  m, v  = Adam moments (beta1 0.9, beta2 0.999); w <- w - lr sqrt(1 - b2^t) / (1 - b1^t) m /
          (sqrt(v) + eps), eps 1e-6 (Kingma & Ba 2015, section 2 "epsilon hat" form, as Keras)
The batches have unequal numbers of real masked positions per example and per micro-batch, so a
per-example or per-micro-batch mean would show. Every comparison also runs on deliberately wrong
references (decay on every variable, no clipping, mean of micro-batch means, the learning rate of
the next step, epsilon added to sqrt(v_hat)) and requires the Trainer to be far outside the
tolerance of those: the tolerances below are tight enough to see each of these mistakes.

The Trainer runs under MirroredStrategy over the one CPU (mirrored variables, the update inside
`strategy.extended.update`) with 2 micro-batches. Two replicas need a fresh process:
test_mirrored_accumulation shows two replicas accumulating equal one device with one big batch (to
2e-6), and test_trainer one device accumulating equal one big batch, so with this test those
configurations are tied to the reference too.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training.optimization import WarmupDecaySchedule
from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from bert_keras.configs.training import TrainingConfig

SEQ, PREDS, BATCH, STEPS = 24, 4, 8, 4
PEAK_LR, WARMUP = 5e-3, 2  # lr at steps 0..3: 0, peak/2, peak (warmup end), peak/2 (last step)
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD, CLS, SEP, MASK = 0, 2, 3, 4
TEXT = [
    "the river flows through the old town and past the mill",
    "in spring the water rises and floods the low fields",
    "farmers built a stone wall to keep the water out",
    "the wall still stands after two hundred years",
    "a small bridge crosses the river near the church",
    "children walk over it to school every morning",
    "the mill was turned into a museum last year",
    "visitors can see how grain was ground into flour",
    "the town market opens on saturday at eight",
    "people sell bread cheese fruit and flowers there",
    "a storm in october broke several old trees",
    "the council planted young oaks along the road",
]
WORDS = sorted({w for s in TEXT for w in s.split()})
VOCAB = SPECIAL + WORDS  # 5 + ~90 < the model's 128


def config(**overrides) -> TrainingConfig:
  """The paper's optimizer settings (TrainingConfig defaults) on a one-layer bert_tiny."""
  return TrainingConfig.from_flat(
      input_files="unused", model="bert_tiny", objective="mlm_nsp",
      model_overrides=dict(vocab_size=128, num_layers=1, hidden_size=32, num_heads=2,
                           intermediate_size=64, max_position_embeddings=SEQ, dropout_rate=0.0,
                           attention_dropout_rate=0.0),
      max_seq_length=SEQ, max_predictions_per_seq=PREDS, train_batch_size=BATCH,
      num_train_steps=STEPS, num_warmup_steps=WARMUP, learning_rate=PEAK_LR, **overrides)


def make_example(rng, first: int, second: int, is_random: bool, num_preds: int) -> dict:
  """[CLS] A [SEP] B [SEP] padded to SEQ, `num_preds` (<= PREDS) positions masked (80/10/10 is
  irrelevant here: every chosen position becomes [MASK]); next_sentence_labels 1 = random next."""
  ids_a = [VOCAB.index(w) for w in TEXT[first].split()][:9]
  ids_b = [VOCAB.index(w) for w in TEXT[second].split()][:SEQ - 3 - 9]
  tokens = [CLS] + ids_a + [SEP] + ids_b + [SEP]
  segments = [0] * (len(ids_a) + 2) + [1] * (len(ids_b) + 1)
  candidates = [i for i, t in enumerate(tokens) if t not in (CLS, SEP)]
  positions = sorted(rng.choice(candidates, num_preds, replace=False).tolist())
  labels = [tokens[p] for p in positions]
  for p in positions:
    tokens[p] = MASK
  pad = SEQ - len(tokens)
  extra = PREDS - num_preds
  return {"input_ids": tokens + [PAD] * pad, "input_mask": [1] * len(tokens) + [0] * pad,
          "segment_ids": segments + [0] * pad, "masked_lm_positions": positions + [0] * extra,
          "masked_lm_ids": labels + [0] * extra,
          "masked_lm_weights": [1.0] * num_preds + [0.0] * extra,
          "next_sentence_labels": [int(is_random)]}


def make_batches() -> list:
  """STEPS global batches of BATCH examples, flat {name: (BATCH, ...)} arrays.

  The first half of every batch (micro-batch 0 when accumulating twice) has 1-2 real predictions
  per example, the second half 3-4: micro-batch means differ from the global mean.
  """
  rng = np.random.default_rng(7)
  batches = []
  for _ in range(STEPS):
    examples = []
    for i in range(BATCH):
      first = int(rng.integers(0, len(TEXT) - 1))
      is_random = bool(rng.integers(0, 2))
      second = int(rng.integers(0, len(TEXT))) if is_random else first + 1
      num_preds = int(rng.integers(1, 3)) if i < BATCH // 2 else int(rng.integers(3, PREDS + 1))
      examples.append(make_example(rng, first, second, is_random, num_preds))
    batches.append({k: np.array([e[k] for e in examples],
                                np.float32 if k == "masked_lm_weights" else np.int32)
                    for k in examples[0]})
  return batches


# === The Trainer ===


def run_trainer(strategy, accum: int, batches: list, model_dir: str) -> dict:
  """Runs STEPS Trainer steps; the weights before and after, and Adam's slots after, by path."""
  cfg = config(gradient_accumulation_steps=accum)
  keras.utils.set_random_seed(1)
  with strategy.scope():
    model = build_pretrainer(cfg)
    optimizer = build_optimizer(cfg)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask("mlm_nsp"), cfg.override(
      output_dir=model_dir, train_batch_size=BATCH, checkpoint_every=1000, log_every=1000))
  variables = model.trainable_variables
  initial = {v.path: v.numpy().copy() for v in variables}
  # (STEPS, accum, micro, ...): one global batch per step, split into micro-batches in order.
  stacked = {k: np.stack([b[k] for b in batches]) for k in batches[0]}
  stacked = {k: v.reshape((STEPS, accum, BATCH // accum) + v.shape[2:]) for k, v in stacked.items()}
  data = lambda ctx, skip: tf.data.Dataset.from_tensor_slices(stacked).skip(skip)
  trainer.train(data, STEPS)
  assert int(trainer.global_step.numpy()) == STEPS
  # Adam's slots and the decay rule are not public API. pylint: disable=protected-access
  slot = lambda slots, v: slots[optimizer._get_variable_index(v)].numpy()
  return {"initial": initial, "final": {v.path: v.numpy() for v in variables},
          "m": {v.path: slot(optimizer._momentums, v) for v in variables},
          "v": {v.path: slot(optimizer._velocities, v) for v in variables},
          "decayed": {v.path: optimizer._use_weight_decay(v) for v in variables},
          "lr_after": float(np.asarray(optimizer.learning_rate))}


# === The reference ===


def mlm_coefficients(batch, micro_means: int = 1) -> np.ndarray:
  """(BATCH, PREDS) float64 factors of the per-prediction cross-entropies in the MLM loss.

  The paper's loss is the mean over the real predictions (weight 1) of the WHOLE global batch:
  w / sum(w). With micro_means > 1, the WRONG mean of the micro-batches' means (sensitivity check).
  """
  w = batch["masked_lm_weights"].astype(np.float64)
  rows = np.arange(BATCH) // (BATCH // micro_means)  # the micro-batch of each example
  per_micro = np.array([w[rows == r].sum() for r in range(micro_means)])
  return w / (micro_means * per_micro[rows][:, None])


def paper_loss(batch, outputs, coefficients):
  """MLM cross-entropy weighted by `coefficients` (BATCH, PREDS) + mean NSP cross-entropy, float64
  (section 3.1: the sum of the mean masked-LM likelihood and the mean NSP likelihood)."""
  log_p = tf.nn.log_softmax(tf.cast(outputs["mlm_logits"], tf.float64))  # (b, P, vocab)
  picked = tf.gather(log_p, batch["masked_lm_ids"], axis=2, batch_dims=2)  # (b, P)
  mlm = -tf.reduce_sum(picked * coefficients)
  nsp_log_p = tf.nn.log_softmax(tf.cast(outputs["nsp_logits"], tf.float64))  # (b, 2)
  nsp = -tf.reduce_mean(tf.gather(nsp_log_p, batch["next_sentence_labels"][:, 0], axis=1,
                                  batch_dims=1))
  return mlm + nsp


def make_gradient_fn(model):
  """A tf.function: (batch, coefficients) -> d paper_loss / d trainable weights (dense tensors)."""
  task = PretrainingTask("mlm_nsp")

  @tf.function
  def fn(batch, coefficients):
    with tf.GradientTape() as tape:
      loss = paper_loss(batch, model(task.model_inputs(batch), training=True), coefficients)
    return [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_variables)]
  return fn


def reference_lr(step: int, peak: float = PEAK_LR, warmup: int = WARMUP,
                 total: int = STEPS) -> float:
  """Linear warmup from 0 to the peak at step `warmup`, then linear decay to 0 at `total`."""
  if step < warmup:
    return peak * step / warmup
  return peak * max(0.0, 1.0 - (step - warmup) / (total - warmup))


def is_decayed(value: np.ndarray) -> bool:
  """The released code's rule (exclude "LayerNorm", "layer_norm", "bias"): here every matrix
  (kernels, the three embedding tables) is decayed, every vector (LayerNorm gamma/beta, biases,
  the MLM output bias) is not."""
  return value.ndim >= 2


def reference_run(model, gradient, initial: dict, batches: list, *, decay_all=False, clip=True,
                  micro_means=1, lr_shift=0, eps_on_v_hat=False) -> dict:
  """STEPS optimizer steps in float64 from `initial`; the keyword arguments make it WRONG on
  purpose (sensitivity checks). `model` and `gradient` (make_gradient_fn(model)) only supply the
  forward and backward pass; the model's weights are set to the float32 rounding of the reference
  weights before each step."""
  cfg = config()
  b1, b2, eps, wd = cfg.optimizer.beta_1, cfg.optimizer.beta_2, cfg.optimizer.epsilon, cfg.optimizer.weight_decay_rate
  variables = model.trainable_variables
  paths = [v.path for v in variables]
  w = {p: initial[p].astype(np.float64) for p in paths}
  m = {p: np.zeros_like(w[p]) for p in paths}
  v = {p: np.zeros_like(w[p]) for p in paths}
  norms = []
  for step, batch in enumerate(batches):
    for var in variables:
      var.assign(w[var.path].astype(np.float32))
    grads = gradient(batch, mlm_coefficients(batch, micro_means))
    g = {p: x.numpy().astype(np.float64) for p, x in zip(paths, grads)}
    norm = np.sqrt(sum(np.sum(x * x) for x in g.values()))
    norms.append(norm)
    if clip:
      g = {p: x * min(1.0, cfg.optimizer.clip_global_norm / norm) for p, x in g.items()}
    lr = reference_lr(max(step + lr_shift, 0))
    t = step + 1
    for p in paths:
      if decay_all or is_decayed(w[p]):
        w[p] = w[p] - lr * wd * w[p]
      m[p] = b1 * m[p] + (1 - b1) * g[p]
      v[p] = b2 * v[p] + (1 - b2) * g[p] ** 2
      if eps_on_v_hat:  # textbook Adam: m_hat / (sqrt(v_hat) + eps)
        w[p] = w[p] - lr * (m[p] / (1 - b1 ** t)) / (np.sqrt(v[p] / (1 - b2 ** t)) + eps)
      else:
        w[p] = w[p] - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m[p] / (np.sqrt(v[p]) + eps)
  return {"final": w, "m": m, "v": v, "norms": norms}


# === Tolerances ===

# Per variable, max |trainer - reference| / max |reference| (of m, of v, of the 4-step update, of
# the weights). Measured on this machine: m 5.6e-7, v 5.3e-7, update 1.6e-5 (float32 gradients from
# a different summation order; Adam divides by sqrt(v), which enlarges their relative error where
# the gradient changes sign between steps), weights 2.2e-6. (Before FusedAdamW's bias corrections
# and 1 - beta2 were accurate: v 1.5e-5, weights 4.6e-6.)
TOL = {"m": 1e-5, "v": 1e-5, "update": 1e-4, "weights": 1e-5}
# The smallest of the deliberate mistakes (decay on LayerNorm and biases too) moves the update by
# 1.2e-2 in the same measure.
MISTAKES = {"decay on every variable": dict(decay_all=True), "no clipping": dict(clip=False),
            "mean of micro-batch means": dict(micro_means=2),
            "learning rate of the next step": dict(lr_shift=1),
            "epsilon added to sqrt(v_hat)": dict(eps_on_v_hat=True)}
# One Trainer run keeps this file under 20 s (tracing the Trainer's step costs ~8-12 CPU-s): the
# configuration with the most machinery. ("default", 1), the default strategy without
# accumulation, matched within the same tolerances too when listed here.
RUNS = {"mirrored-strategy-accumulation-2": ("mirrored", 2)}


def errors(run: dict, ref: dict) -> dict:
  """{quantity: {path: max |run - ref| / max |ref|}} for m, v, update and weights."""
  out = {k: {} for k in TOL}
  for p, initial in run["initial"].items():
    pairs = {"m": (run["m"][p], ref["m"][p]), "v": (run["v"][p], ref["v"][p]),
             "update": (run["final"][p] - initial, ref["final"][p] - initial),
             "weights": (run["final"][p], ref["final"][p])}
    for k, (a, b) in pairs.items():
      out[k][p] = float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
  return out


# === Fixtures ===


@pytest.fixture(scope="module")
def batches():
  return make_batches()


@pytest.fixture(scope="module")
def runs(batches, tmp_path_factory):
  """Trainer runs by name, made on first use (one MirroredStrategy object per process)."""
  cache = {}

  def get(name):
    if name not in cache:
      kind, accum = RUNS[name]
      strategy = (tf.distribute.MirroredStrategy(["/cpu:0"]) if kind == "mirrored"
                  else tf.distribute.get_strategy())
      cache[name] = run_trainer(strategy, accum, batches, str(tmp_path_factory.mktemp(name)))
    return cache[name]
  return get


@pytest.fixture(scope="module")
def reference(batches, runs):
  """(reference(**mistakes) -> result, the shared initial weights)."""
  initial = runs(next(iter(RUNS)))["initial"]
  keras.utils.set_random_seed(2)  # other weights than the Trainer's: all are overwritten
  model = build_pretrainer(config())
  gradient = make_gradient_fn(model)
  cache = {}

  def get(**mistakes):
    key = tuple(sorted(mistakes.items()))
    if key not in cache:
      cache[key] = reference_run(model, gradient, initial, batches, **mistakes)
    return cache[key]
  return get, initial


# === Tests ===


def test_schedule_at_start_warmup_end_and_last_step():
  """The paper's shape at its scale (10k warmup of 1M steps) and the 4-step schedule used below."""
  schedule = WarmupDecaySchedule(1e-4, num_train_steps=1_000_000, num_warmup_steps=10_000)
  steps = [0, 1, 5_000, 9_999, 10_000, 10_001, 505_000, 999_999, 1_000_000, 1_200_000]
  got = [float(schedule(s)) for s in steps]
  want = [reference_lr(s, 1e-4, 10_000, 1_000_000) for s in steps]
  # atol: float32 resolution at the peak. Near the end the schedule forms 1 - progress in float32
  # (cancellation): the last step's 1.0101e-10 comes out 1.0133e-10, 3e-13 off.
  np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7 * 1e-4)
  assert got[0] == 0.0 and got[4] == pytest.approx(1e-4) and got[-2] == got[-1] == 0.0
  # The last update's rate, one step before zero: peak / (T - W).
  assert got[-3] == pytest.approx(1e-4 / 990_000, rel=1e-2)
  small = WarmupDecaySchedule(PEAK_LR, num_train_steps=STEPS, num_warmup_steps=WARMUP)
  np.testing.assert_allclose([float(small(s)) for s in range(STEPS + 1)],
                             [0, PEAK_LR / 2, PEAK_LR, PEAK_LR / 2, 0], rtol=1e-6)


def test_weight_decay_skips_exactly_layer_norms_and_biases(runs):
  """Decayed: every kernel and the token, position and type embeddings (as in the released code,
  whose exclusions are "LayerNorm", "layer_norm", "bias"); not: LayerNorm gamma/beta, every bias."""
  decayed = runs(next(iter(RUNS)))["decayed"]
  skipped = {p for p, d in decayed.items() if not d}
  assert {p for p, d in decayed.items() if d} == {
      p for p in decayed if p.endswith("/kernel") or p.endswith("/embeddings")}
  assert skipped == {p for p in decayed if p.rsplit("/", 1)[1] in ("gamma", "beta", "bias",
                                                                   "output_bias")}
  assert {"token_embedding/embeddings", "position_embedding/embeddings",
          "type_embedding/embeddings", "nsp_head/kernel"} <= set(decayed) - skipped
  assert {"embeddings_layer_norm/gamma", "mlm_head/output_bias", "nsp_head/bias"} <= skipped
  # The reference's rule (matrices decayed, vectors not) is the same set.
  initial = runs(next(iter(RUNS)))["initial"]
  assert all(decayed[p] == is_decayed(initial[p]) for p in decayed)


@pytest.mark.parametrize("name", list(RUNS))
def test_trainer_step_matches_reference(name, runs, reference):
  run = runs(name)
  get, initial = reference
  assert all(np.array_equal(run["initial"][p], initial[p]) for p in initial)  # same start
  ref = get()
  # Every step clips (norms 2.0-2.7 here), and the 4 steps move the weights well above float32
  # noise: the comparison sees clipping, the schedule and the update.
  assert min(ref["norms"]) > 1.5, ref["norms"]
  assert max(np.max(np.abs(ref["final"][p] - initial[p])) for p in initial) > 5e-3
  assert run["lr_after"] == 0.0  # the schedule's end: step STEPS
  # Every (quantity, variable) over its tolerance, worst first: which term of which variable group.
  over = sorted(((e / TOL[q], q, p, e) for q, by_path in errors(run, ref).items()
                 for p, e in by_path.items() if e > TOL[q]), reverse=True)
  lines = [f"  {q:8s} {p:50s} {e:.2e} > {TOL[q]:.1e}" for _, q, p, e in over[:20]]
  assert not over, f"{name}: differs from the reference (max |run - ref| / max |ref|):\n" + (
      "\n".join(lines))


def test_tolerances_catch_each_deliberate_mistake(runs, reference):
  """The comparison above would fail for each of these wrong references, by a wide margin."""
  run = runs(next(n for n, (_, accum) in RUNS.items() if accum > 1))
  get, _ = reference
  for mistake, kwargs in MISTAKES.items():
    worst = max(errors(run, get(**kwargs))["update"].values())
    assert worst > 20 * TOL["update"], (mistake, worst)
