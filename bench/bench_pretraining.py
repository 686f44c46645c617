"""Pretraining throughput (sequences/s) and model-FLOPs utilisation, ours vs keras-hub vs Model Garden.

  .venv/bin/python bench/bench_pretraining.py [--shapes=mini,base] [--steps=10] [--rounds=5]

Only the --systems chosen are installed. tests/bench smoke-runs it with --shapes=tiny --steps=1
--probe_sizes=256 and only the peers already installed.

Every system trains the same shapes (seq 128, 20 masked positions, vocab 30522, MLM + NSP, AdamW,
float32) on the same synthetic batch, one process each (see "Interleaved rounds" below):
- ours: BertPretrainer + the Trainer's step (strategy.run in a tf.function, TF 2.21 / Keras 3.15);
- keras-hub 0.32 BertMaskedLM (installed with `pip --target bench/.venvs/khub_lib --no-deps`, run
  with our venv: it changes no pinned version); it has no NSP head, so it does slightly less work;
- Model Garden BertPretrainerV2 (tf-models-official 2.20 in bench/.venvs/tfm, which pins TF 2.20),
  with a GradientTape step in a tf.function.
Activation: like for like. Both peers default to the tanh GELU (Model Garden BertEncoderV2's
`inner_activation`, keras-hub BertBackbone's `gelu_approximate`); `--hidden_act=gelu_tanh` (default)
runs ours with the same, `--hidden_act=gelu` runs all three with the exact erf GELU (our model's
default, the paper's), patching the peers.
FLOPs per sequence: T * (6N + 12*L*H*T) for the encoder (N = non-embedding encoder parameters),
plus 6 * P * (H*H + H*V) for the MLM head. MFU counts these model FLOPs for every system (the
issue's definition: throughput times the model's FLOPs). Ours executes fewer: its last block
computes only the 1 + P rows the heads read ([CLS] and the masked positions; keys and values still
for all T), so ours' rows also give HFU, the FLOPs it executes per second over the same peak
(`executed_flops_per_sequence`); the peers execute the formula's FLOPs (their HFU = MFU).
Interleaved rounds: this host's speed drifts by tens of percent over minutes, so every system
runs in a process of its own that is started and warmed up once, then stays alive and is driven
round by round: round r runs each system in turn (order rotated by r) for `--steps / --rounds`
timed steps between two peak probes. A drift then falls on every system alike, and "per-round"
is the median over rounds of ours' seq/s over the faster peer's within the same round.
MFU: the probe is the best rate of square float32 tf.matmul at 1024^2 and 2048^2 (3 windows each,
best of), in the same process, so with the same TF build (Model Garden: its own TF 2.20) and
thread pools as the steps. A round's peak is the better of the two probes around it, its MFU is
the round's step FLOP rate over that peak, and the MFU reported is the median over rounds. The old
figure, MFU against one peak probed up front in a separate process (best of 3x10 reps of the same
matmuls), is printed beside it for comparison. seq/s is the mean over all timed steps.
GEMM ceiling (`--gemms`, on by default): ours' process also times its step's matrix multiplies
alone (every Dense's forward, input-gradient and kernel-gradient GEMM, the attention's batched
matmuls and their gradients, the MLM head's; the last block at 1 + P query rows, as ours runs it)
against the same probes, once as TF schedules them and once strictly one after another. No step
made of these kernels can beat that time, whatever its other ops cost: its row gives the seq/s and
the MFU (model FLOPs) of a step that took only that long, and its HFU (the executed GEMM FLOPs
over the peak). (With it, ours' round r+1 is bracketed
by the probe after its round-r steps, taken before the GEMM runs, and the probe after its own
steps; the peers' rounds by the probes just around them.)
JSON (bench/out/bench_pretraining.json, or --out): peak_flops = the up-front peak; per row:
seq_per_s, mfu (in-process, median over rounds), mfu_upfront, probe_flops (every probe, FLOP/s),
round_seq_per_s, round_peak_flops, round_mfu, peak_flops_median, round_ratio (ours' rows).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENVS = os.path.join(HERE, ".venvs")
TFM_PY = os.path.join(VENVS, "tfm", "bin", "python")
KHUB_LIB = os.path.join(VENVS, "khub_lib")

# "tiny" is no measurement: it checks the bench still runs end to end (tests/bench).
SHAPES = {"tiny": dict(L=2, H=128, A=2, batch=4), "mini": dict(L=4, H=256, A=4, batch=16),
          "base": dict(L=12, H=768, A=12, batch=8)}
SEQ, PRED, VOCAB = 128, 20, 30522


def flops_per_sequence(L, H, **_):
  n = L * (4 * H * H + 2 * H * 4 * H)  # attention q,k,v,o + feed-forward (weights only)
  encoder = SEQ * (6 * n + 12 * L * H * SEQ)
  head = 6 * PRED * (H * H + H * VOCAB)
  return encoder + head


def executed_flops_per_sequence(L, H, **_):
  """Ours' FLOPs: the formula's, but the last block's queries, attention, output projection and
  feed-forward run on R = 1 + P rows ([CLS] and the masked positions), its keys and values on all
  T: 6 * (T * 2H^2 + R * 10H^2) + 12 * H * T * R instead of 6 * T * 12H^2 + 12 * H * T^2."""
  rows = 1 + PRED
  full_block = SEQ * 6 * 12 * H * H + 12 * H * SEQ * SEQ
  last_block = 6 * (SEQ * 2 * H * H + rows * 10 * H * H) + 12 * H * SEQ * rows
  return flops_per_sequence(L, H) - full_block + last_block


def ours_gemm_specs(L, H, A, batch, last_block_rows=None, **_):
  """Ours' step's matrix multiplies as (a_shape, b_shape, transpose_a, transpose_b): for every
  Dense (m, k) x (k, n) its forward, input-gradient and kernel-gradient GEMMs (the feed-forward's
  H -> 4H input gradient on a transposed kernel copy); for every layer's
  attention the two batched matmuls and their four gradients; the MLM head's transform and
  tied-vocabulary GEMMs likewise. The last block as ours runs it: keys and values for all rows,
  queries and everything after the attention for the 1 + P rows the heads read
  (`last_block_rows=SEQ` lists a full last block instead)."""
  B, D = batch, H // A
  M, P = B * SEQ, B * PRED
  n_last = last_block_rows or 1 + PRED  # query rows per sequence in the last block
  specs = []

  def dense(m, k, n, transposed_copy=False):
    # transposed_copy: the input gradient multiplies by a transposed copy of the kernel (NN), as
    # ours' feed-forward widening projection does (bert_keras/kernels/wide_dense.py).
    input_grad = (((m, n), (n, k), False, False) if transposed_copy
                  else ((m, n), (k, n), False, True))
    specs.extend([((m, k), (k, n), False, False), input_grad, ((m, k), (m, n), True, False)])

  for layer in range(L):
    n = SEQ if layer < L - 1 else n_last
    rows = B * n
    if n == SEQ:
      dense(M, H, 3 * H)
    else:
      dense(M, H, 2 * H)  # keys and values
      dense(rows, H, H)  # queries
    dense(rows, H, H)
    dense(rows, H, 4 * H, transposed_copy=True)
    dense(rows, 4 * H, H)
    q, k, s = (B, A, n, D), (B, A, SEQ, D), (B, A, n, SEQ)
    specs.extend([(q, k, False, True), (s, k, False, False), (s, q, True, False),  # scores
                  (s, k, False, False), (q, k, False, True), (s, q, True, False)])  # context
  dense(P, H, H)
  specs.extend([((P, H), (VOCAB, H), False, True), ((P, VOCAB), (VOCAB, H), False, False),
                ((P, VOCAB), (P, H), True, False)])
  return specs


def gemm_flops(specs):
  """2 * m * k * n summed over the GEMMs of `specs` (batched ones per batch element)."""
  total = 0
  for a, b, ta, tb in specs:
    m, k = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    n = b[-2] if tb else b[-1]
    total += 2 * math.prod(a[:-2]) * m * k * n
  return total


def ensure_peers(systems):
  """Installs the chosen peers once (idempotent), into bench/.venvs only."""
  if "model_garden" in systems and not os.path.exists(TFM_PY):
    subprocess.check_call([sys.executable, "-m", "venv", os.path.join(VENVS, "tfm")])
    subprocess.check_call([TFM_PY, "-m", "pip", "install", "-q", "tf-models-official==2.20.0",
                           "tensorflow-cpu==2.20.0"])
  # regex: keras_hub's tokenizers import it at package import (our venv does not carry it).
  if "keras_hub" in systems and not all(os.path.exists(os.path.join(KHUB_LIB, name))
                                        for name in ("keras_hub", "regex")):
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                           KHUB_LIB, "keras-hub==0.32.0", "kagglehub==1.0.2",
                           "kagglesdk==0.1.28", "regex==2026.11.15"])


COMMON = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import tensorflow as tf
    L, H, A, B = [int(x) for x in sys.argv[1:5]]
    EXACT_GELU = os.environ.get("BENCH_ACT", "gelu_tanh") == "gelu"
    SEQ, PRED, VOCAB = %d, %d, %d
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, VOCAB, (B, SEQ)).astype("int32")
    positions = np.sort(rng.choice(SEQ, (B, PRED)), axis=1).astype("int32")
    labels = rng.integers(1000, VOCAB, (B, PRED)).astype("int32")
    nsp = rng.integers(0, 2, (B, 1)).astype("int32")
    # ~0.15 s and ~0.6 s per window at ~150 GFLOP/s (--probe_sizes: the sizes probed)
    PROBE_REPS = {n: {2048: 5}.get(n, 10)
                  for n in map(int, os.environ.get("BENCH_PROBE_SIZES", "1024,2048").split(","))}
    def make_probe():
      # Best fp32 square-matmul rate (FLOP/s) over 3 windows per size, in this process.
      mats = {}
      for n in PROBE_REPS:
        a, b = tf.random.normal((n, n)), tf.random.normal((n, n))
        f = tf.function(lambda a, b: tf.matmul(a, b))
        f(a, b).numpy()  # trace + warm up
        mats[n] = (f, a, b)
      def probe():
        best = 0.0
        for n, (f, a, b) in mats.items():
          for _ in range(3):
            t = time.perf_counter()
            for _ in range(PROBE_REPS[n]):
              c = f(a, b)
            c.numpy()
            best = max(best, 2 * n ** 3 * PROBE_REPS[n] / (time.perf_counter() - t))
        return best
      return probe
    def serve(step, commands=None):
      # Warm up, then answer the driver's commands on stdin, one JSON reply ("@@"-prefixed) each:
      # "probe" -> the matmul peak now; "steps k" -> seconds for k steps; any of `commands`.
      for _ in range(2):
        float(step())  # trace + warm up
      probe = make_probe()
      def steps(k):
        t = time.perf_counter()
        for _ in range(int(k)):
          out = step()
        float(out)  # wait for the last step
        return {"seconds": time.perf_counter() - t}
      handlers = dict(commands or {}, probe=lambda: {"flops": probe()}, steps=steps)
      print("@@" + json.dumps({"ready": True}), flush=True)
      for line in sys.stdin:
        name, *args = line.split()
        if name == "quit":
          break
        print("@@" + json.dumps(handlers[name](*args)), flush=True)
""" % (SEQ, PRED, VOCAB))

GEMMS = textwrap.dedent("""
    def gemm_commands():
      # The step's matrix multiplies alone, as the driver lists them (`ours_gemm_specs`, passed in
      # BENCH_GEMMS): timed with the other ops free, this is the fastest step these GEMM kernels
      # allow ("gemms_overlap": TF schedules them as it likes, two at a time like the step's own;
      # "gemms_serial": one after another). No list (e.g. ours_xla): no commands.
      if "BENCH_GEMMS" not in os.environ:
        return {}
      specs = json.loads(os.environ["BENCH_GEMMS"])
      # Operands of their own per GEMM: with shared ones, grappler would merge the GEMMs that
      # repeat (every layer's) into one.
      operands = [(tf.random.normal(a), tf.random.normal(b)) for a, b, _, _ in specs]
      def build(serial):
        @tf.function
        def run():
          outs, last = [], []
          for (_, _, ta, tb), (x, y) in zip(specs, operands):
            with tf.control_dependencies(last if serial else []):
              c = tf.matmul(x, y, transpose_a=ta, transpose_b=tb)
            last = [c]
            outs.append(c[(0,) * len(c.shape)])  # one element each: nothing is pruned
          return tf.add_n(outs)
        float(run())
        def timed(reps):
          t = time.perf_counter()
          for _ in range(int(reps)):
            out = run()
          float(out)
          return {"seconds": time.perf_counter() - t}
        return timed
      return {"gemms_overlap": build(False), "gemms_serial": build(True)}
""")


OURS = COMMON + GEMMS + textwrap.dedent("""
    from bert_keras.training.pretrain import build_optimizer, build_pretrainer
    from bert_keras.training.pretraining_task import PretrainingTask
    from bert_keras.training.trainer import Trainer
    from bert_keras.configs.training import TrainingConfig
    import tempfile
    cfg = TrainingConfig.from_flat(input_files="x", model="bert_base", model_overrides=dict(
        num_layers=L, hidden_size=H, num_heads=A, intermediate_size=4 * H,
        hidden_act="gelu" if EXACT_GELU else "gelu_tanh"),
        max_seq_length=SEQ, max_predictions_per_seq=PRED, train_batch_size=B,
        jit_compile=os.environ.get("BENCH_JIT") == "1")
    strategy = tf.distribute.get_strategy()
    model, opt = build_pretrainer(cfg), build_optimizer(cfg)
    trainer = Trainer(strategy, model, opt, PretrainingTask(), cfg.override(
        output_dir=tempfile.mkdtemp()), jit_loss=True)
    batch = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids),
             "masked_lm_positions": positions, "masked_lm_ids": labels,
             "masked_lm_weights": np.ones((B, PRED), "float32"), "next_sentence_labels": nsp}
    batch = {k: v[None] for k, v in batch.items()}  # (accum=1, batch, ...)
    ds = tf.data.Dataset.from_tensors(batch).repeat()
    it = iter(strategy.experimental_distribute_dataset(ds))
    one = tf.constant(1)
    serve(lambda: trainer._train_fn(it, one)["mlm_loss_sum"], gemm_commands())
""")

KHUB = COMMON + textwrap.dedent("""
    import keras, keras_hub
    if EXACT_GELU:  # BertBackbone has no activation argument: it uses this module-level name.
      from keras_hub.src.models.bert import bert_backbone
      bert_backbone.gelu_approximate = lambda x: keras.activations.gelu(x, approximate=False)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=VOCAB, num_layers=L, num_heads=A,
        hidden_dim=H, intermediate_dim=4 * H, max_sequence_length=512)
    model = keras_hub.models.BertMaskedLM(backbone=backbone, preprocessor=None)
    opt = keras.optimizers.AdamW(1e-4, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)
    model.compile(optimizer=opt, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  weighted_metrics=[])
    x = {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": np.ones_like(ids),
         "mask_positions": positions}
    w = np.ones((B, PRED), "float32")
    def step():
      return model.train_on_batch(x, labels, sample_weight=w)
    serve(step)
""")

TFM = COMMON + textwrap.dedent("""
    import tf_keras
    from official.nlp.modeling import models, networks
    encoder = networks.BertEncoderV2(vocab_size=VOCAB, hidden_size=H, num_layers=L,
        num_attention_heads=A, inner_dim=4 * H, max_sequence_length=512,
        inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=not EXACT_GELU))
    model = models.BertPretrainerV2(encoder_network=encoder, classification_heads=[
        __import__("official.nlp.modeling.layers", fromlist=["ClassificationHead"])
        .ClassificationHead(inner_dim=H, num_classes=2, name="next_sentence")])
    opt = tf_keras.optimizers.experimental.AdamW(1e-4, weight_decay=0.01, epsilon=1e-6,
                                                 global_clipnorm=1.0)
    x = {"input_word_ids": ids, "input_mask": np.ones_like(ids), "input_type_ids": np.zeros_like(ids),
         "masked_lm_positions": positions}
    xent = tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function
    def step():
      with tf.GradientTape() as tape:
        out = model(x, training=True)
        loss = xent(labels, out["mlm_logits"]) + xent(nsp[:, 0], out["next_sentence"])
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply_gradients(zip(grads, model.trainable_variables))
      return loss
    serve(step)
""")

PEAK = textwrap.dedent("""
    import json, os, time, tensorflow as tf
    best = 0.0
    for n in map(int, os.environ.get("BENCH_PROBE_SIZES", "1024,2048").split(",")):
      a = tf.random.normal((n, n)); b = tf.random.normal((n, n))
      f = tf.function(lambda a, b: tf.matmul(a, b))
      f(a, b).numpy()
      for _ in range(3):
        t = time.perf_counter(); reps = 10
        for _ in range(reps):
          c = f(a, b)
        c.numpy()
        best = max(best, 2 * n ** 3 * reps / (time.perf_counter() - t))
    print(json.dumps({"flops": best}))
""")


_HIDDEN_ACT = ["gelu_tanh"]  # set from --hidden_act in main()
_PROBE_SIZES = ["1024,2048"]  # set from --probe_sizes in main()


def run_peak():
  """The old up-front peak: best fp32 square-matmul rate in a separate process."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
             BENCH_PROBE_SIZES=_PROBE_SIZES[0])
  done = subprocess.run([sys.executable, "-c", PEAK], env=env, capture_output=True, text=True,
                        timeout=600, check=True)
  return json.loads(done.stdout.strip().splitlines()[-1])["flops"]


class Worker:
  """One system's process for one shape: warmed up once, then driven round by round."""

  def __init__(self, name, python, code, shape, extra_env=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONPATH=ROOT,
               BENCH_ACT=_HIDDEN_ACT[0], BENCH_PROBE_SIZES=_PROBE_SIZES[0])
    env.update(extra_env or {})
    s = SHAPES[shape]
    self.name, self.error = name, None
    self._stderr = tempfile.TemporaryFile(mode="w+")
    self._proc = subprocess.Popen(
        [python, "-c", code, str(s["L"]), str(s["H"]), str(s["A"]), str(s["batch"])], env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True)
    self._read()  # "ready": traced, warmed up, probe built

  def _read(self):
    for line in self._proc.stdout:
      if line.startswith("@@"):
        return json.loads(line[2:])
    self._stderr.seek(0)
    lines = self._stderr.read().strip().splitlines()
    self.error = lines[-1][:200] if lines else f"exited with {self._proc.wait()}"
    raise RuntimeError(self.error)

  def ask(self, command):
    self._proc.stdin.write(command + "\n")
    self._proc.stdin.flush()
    return self._read()

  def close(self):
    if self._proc.poll() is None:
      try:
        self._proc.stdin.write("quit\n")
        self._proc.stdin.close()
        self._proc.wait(timeout=60)
      except (OSError, subprocess.TimeoutExpired):
        self._proc.kill()
    self._stderr.close()


def with_mfu(r, flops_per_seq, upfront_peak):
  """Adds the in-process MFU fields to one system's result (see the module docstring).

  Round i's peak is the better of the probes just before and just after it; its MFU is the round's
  step FLOP rate over that peak; the reported MFU is the median over rounds.
  """
  probes = r["probe_flops"]
  round_peak = [max(a, b) for a, b in zip(probes[:-1], probes[1:])]
  round_mfu = [v * flops_per_seq / p for v, p in zip(r["round_seq_per_s"], round_peak)]
  return dict(r, mfu=statistics.median(round_mfu), round_peak_flops=round_peak,
              round_mfu=round_mfu, peak_flops_median=statistics.median(probes),
              mfu_upfront=r["seq_per_s"] * flops_per_seq / upfront_peak)


def run_shape(shape, systems, rounds, per, gemms):
  """Interleaved rounds: every round runs each system's probe + `per` steps + probe in turn.

  The systems' processes start (and warm up) one after another, then stay alive; round r runs
  them in an order rotated by r, so a drift of the host's speed falls on every system alike and
  the per-round ratios compare steps timed seconds apart. Returns {name: result or error}.
  """
  batch = SHAPES[shape]["batch"]
  specs = ours_gemm_specs(**SHAPES[shape])  # the GEMMs ours' worker times alone (`gemms`)
  workers, results = {}, {}
  try:
    for name, (python, code, env) in systems.items():
      if name == "ours" and gemms:
        env = dict(env or {}, BENCH_GEMMS=json.dumps(specs))
      try:
        workers[name] = Worker(name, python, code, shape, env)
      except RuntimeError as e:
        results[name] = {"error": str(e)}
    if gemms and "ours" in workers:
      for mode in ("overlap", "serial"):
        results[f"ours_gemms_{mode}"] = {"seconds": [], "probe_flops": [],
                                         "gemm_flops": gemm_flops(specs), "gemms": len(specs)}
    data = {name: {"seconds": [], "probe_flops": []} for name in workers}
    names = list(workers)
    for r in range(rounds):
      order = names[r % len(names):] + names[:r % len(names)] if names else []
      for name in order:
        w = workers[name]
        try:
          if r == 0:
            data[name]["probe_flops"].append(w.ask("probe")["flops"])
          data[name]["seconds"].append(w.ask(f"steps {per}")["seconds"])
          data[name]["probe_flops"].append(w.ask("probe")["flops"])
          if name == "ours" and gemms:
            for mode in ("overlap", "serial"):
              g = w.ask(f"gemms_{mode} {per}")
              res = results[f"ours_gemms_{mode}"]
              res["seconds"].append(g["seconds"])
              # the probe just before (the steps') and just after this measurement
              res["probe_flops"].append(data[name]["probe_flops"][-1])
              res["probe_flops"].append(w.ask("probe")["flops"])
        except RuntimeError as e:
          results[name] = {"error": str(e)}
          names.remove(name)
    for mode in ("overlap", "serial"):
      res = results.get(f"ours_gemms_{mode}")
      if res is not None and len(res["seconds"]) != rounds:
        results[f"ours_gemms_{mode}"] = {"error": "ours stopped: " + str(
            results.get("ours", {}).get("error"))}
    for name, d in data.items():
      if name in results:
        continue
      results[name] = {"seq_per_s": batch * per * rounds / sum(d["seconds"]),
                       "round_seq_per_s": [batch * per / x for x in d["seconds"]],
                       "probe_flops": d["probe_flops"]}
  finally:
    for w in workers.values():
      w.close()
  return results


def gemm_ceiling(res, batch, per, flops_per_seq):
  """The step's GEMMs alone, per measurement against the better of its two probes: the MFU (model
  FLOPs of `batch` sequences) and the HFU (the GEMMs' own FLOPs) of a step that took only that long."""
  probes = res["probe_flops"]
  peaks = [max(probes[2 * i], probes[2 * i + 1]) for i in range(len(res["seconds"]))]
  mfus = [flops_per_seq * batch * per / s / p for s, p in zip(res["seconds"], peaks)]
  hfus = [res["gemm_flops"] * per / s / p for s, p in zip(res["seconds"], peaks)]
  return dict(res, seq_per_s=batch * per * len(res["seconds"]) / sum(res["seconds"]),
              mfu=statistics.median(mfus), round_mfu=mfus, hfu=statistics.median(hfus))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--shapes", default="mini,base")
  parser.add_argument("--steps", type=int, default=10, help="timed steps per system and shape")
  parser.add_argument("--rounds", type=int, default=5,
                      help="the timed steps are split into this many interleaved rounds, each "
                      "beside a peak probe")
  parser.add_argument("--systems", default="ours,keras_hub,model_garden")
  parser.add_argument("--gemms", action=argparse.BooleanOptionalAction, default=True,
                      help="also time ours' GEMMs alone (the MFU ceiling of these kernels)")
  parser.add_argument("--hidden_act", default="gelu_tanh", choices=("gelu_tanh", "gelu"),
                      help="the GELU every system uses (the peers default to gelu_tanh)")
  parser.add_argument("--probe_sizes", default="1024,2048",
                      help="square fp32 matmul sizes of the peak probes (smaller: a quick check)")
  parser.add_argument("--output_file", default=os.path.join(HERE, "out", "bench_pretraining.json"))
  args = parser.parse_args(argv)
  if not 1 <= args.rounds <= args.steps:
    parser.error(f"--rounds must be in [1, --steps={args.steps}], got {args.rounds}")
  known = ("ours", "ours_xla", "keras_hub", "model_garden")
  chosen = args.systems.split(",")
  for name in chosen:
    if name not in known:
      parser.error(f"--systems: unknown system {name!r} (choose from {', '.join(known)})")
  _HIDDEN_ACT[0] = args.hidden_act
  _PROBE_SIZES[0] = args.probe_sizes
  ensure_peers(chosen)
  load_before = os.getloadavg()  # the host is shared: every table carries the load it ran under
  peak = run_peak()
  every = {
      "ours": (sys.executable, OURS, None),
      "ours_xla": (sys.executable, OURS, {"BENCH_JIT": "1"}),
      "keras_hub": (sys.executable, KHUB, {"PYTHONPATH": KHUB_LIB, "KERAS_BACKEND": "tensorflow"}),
      "model_garden": (TFM_PY, TFM, {"PYTHONPATH": ""}),
  }
  per = args.steps // args.rounds
  print(f"hidden_act={args.hidden_act} for every system; {args.rounds} interleaved rounds of "
        f"{per} timed steps per system (order rotated each round)")
  print("MFU = median over rounds of (round's step FLOP/s) / (fp32 matmul peak probed in the same "
        "process just before/after the round, best of)")
  print(f"old method, for comparison: one peak probed up front in a separate process: "
        f"{peak / 1e9:.1f} GFLOP/s -> column 'MFU@up-front'")
  print("'vs best peer': ours' seq/s over the faster peer's; 'per-round': the median over rounds "
        "of that ratio within each round (drift-free)")
  print("HFU: the FLOPs a system executes per second over the same peak (ours' last block runs "
        "only the rows the heads read; the peers execute the formula's FLOPs)")
  print(f"{'shape':6} {'batch':>5} {'system':17} {'seq/s':>8} {'MFU':>6} "
        f"{'peak GFLOP/s med [min-max]':>27} {'MFU@up-front':>12} {'vs best peer':>12} "
        f"{'per-round':>9} {'HFU':>6}")
  rows, details = [], []
  for shape in args.shapes.split(","):
    if shape not in SHAPES:
      parser.error(f"--shapes: unknown shape {shape!r} (choose from {', '.join(SHAPES)})")
    batch = SHAPES[shape]["batch"]
    results = run_shape(shape, {n: every[n] for n in chosen}, args.rounds, per,
                        args.gemms and "ours" in chosen)
    peers = {n: r for n, r in results.items() if n in ("keras_hub", "model_garden")
             and "seq_per_s" in r}
    for name, r in results.items():
      if "error" in r:
        print(f"{shape:6} {batch:5d} {name:17} error: {r['error']}")
        continue
      if name.startswith("ours_gemms"):
        r = gemm_ceiling(r, batch, per, flops_per_sequence(**SHAPES[shape]))
        print(f"{shape:6} {batch:5d} {name:17} {r['seq_per_s']:8.2f} {100 * r['mfu']:5.1f}%   "
              f"({r['gemms']} GEMMs, {r['gemm_flops'] / 1e9:.1f} GFLOP executed, HFU "
              f"{100 * r['hfu']:.1f}%; the ceiling: every other op free)")
        details.append(f"  {shape} {name}: MFU per measurement "
                       + " ".join(f"{100 * x:.1f}%" for x in r["round_mfu"]))
        rows.append(dict(shape=shape, system=name, **r))
        continue
      r = with_mfu(r, flops_per_sequence(**SHAPES[shape]), peak)
      executed = (executed_flops_per_sequence if name in ("ours", "ours_xla")
                  else flops_per_sequence)(**SHAPES[shape])
      r["hfu"] = r["mfu"] * executed / flops_per_sequence(**SHAPES[shape])
      g = [p / 1e9 for p in r["probe_flops"]]
      ratio = per_round = ""
      if peers and name in ("ours", "ours_xla"):
        ratio = f"{r['seq_per_s'] / max(p['seq_per_s'] for p in peers.values()):.2f}x"
        rounds = [v / max(p["round_seq_per_s"][i] for p in peers.values())
                  for i, v in enumerate(r["round_seq_per_s"])]
        r["round_ratio"] = rounds
        per_round = f"{statistics.median(rounds):.2f}x"
      span = f"{r['peak_flops_median'] / 1e9:.1f} [{min(g):.1f}-{max(g):.1f}]"
      print(f"{shape:6} {batch:5d} {name:17} {r['seq_per_s']:8.2f} "
            f"{100 * r['mfu']:5.1f}% {span:>27} {100 * r['mfu_upfront']:11.1f}% {ratio:>12} "
            f"{per_round:>9} {100 * r['hfu']:5.1f}%")
      details.append(f"  {shape} {name}: probes GFLOP/s " + " ".join(f"{x:.1f}" for x in g)
                     + "; round seq/s " + " ".join(f"{x:.2f}" for x in r["round_seq_per_s"])
                     + "; round MFU " + " ".join(f"{100 * x:.1f}%" for x in r["round_mfu"])
                     + ("; round ratio " + " ".join(f"{x:.2f}x" for x in r["round_ratio"])
                        if "round_ratio" in r else ""))
      rows.append(dict(shape=shape, system=name, **r))
  load_after = os.getloadavg()
  print("load average (1/5/15 min) before: " + "/".join(f"{x:.2f}" for x in load_before)
        + ", after: " + "/".join(f"{x:.2f}" for x in load_after))
  print("per round:")
  print("\n".join(details))
  os.makedirs(os.path.dirname(os.path.abspath(args.output_file)), exist_ok=True)
  tmp = args.output_file + ".tmp"
  with open(tmp, "w", encoding="utf-8") as f:
    json.dump({"peak_flops": peak, "peak_method": "peak_flops: up-front, separate process; row "
               "mfu: in-process probes beside the steps, median of per-round ratios",
               "hidden_act": args.hidden_act, "load_before": load_before,
               "load_after": load_after, "steps": args.steps, "rounds": args.rounds,
               "rows": rows}, f, indent=2)
  os.replace(tmp, args.output_file)


if __name__ == "__main__":
  main()
