"""Pretraining throughput (sequences/s) and model-FLOPs utilisation, ours vs keras-hub vs Model Garden.

  .venv/bin/python bench/bench_pretraining.py [--shapes=mini,base] [--steps=10] [--rounds=5]

Every system trains the same shapes (seq 128, 20 masked positions, vocab 30522, MLM + NSP, AdamW,
float32) on the same synthetic batch, one process each, one after the other:
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
plus 6 * P * (H*H + H*V) for the MLM head.
MFU: this host's speed drifts by tens of percent over minutes, so each system's process measures
its own fp32 matmul peak beside its training steps: after warm-up it alternates a peak probe with
`--steps / --rounds` timed steps (probe, steps, probe, ..., steps, probe). The probe is the best
rate of square float32 tf.matmul at 1024^2 and 2048^2 (3 windows each, best of), in the same
process, so with the same TF build (Model Garden: its own TF 2.20) and thread pools as the steps.
A round's peak is the better of the two probes around it, its MFU is the round's step FLOP rate
over that peak, and the MFU reported is the median over rounds. The old figure, MFU against one
peak probed up front in a separate process (best of 3x10 reps of the same matmuls), is printed
beside it for comparison. seq/s is the mean over all timed steps (probes excluded), as before.
JSON (bench/out/bench_pretraining.json, or --out): peak_flops = the up-front peak; per row:
seq_per_s, mfu (in-process, median over rounds), mfu_upfront, probe_flops (every probe, FLOP/s),
round_seq_per_s, round_peak_flops, round_mfu, peak_flops_median.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENVS = os.path.join(HERE, ".venvs")
TFM_PY = os.path.join(VENVS, "tfm", "bin", "python")
KHUB_LIB = os.path.join(VENVS, "khub_lib")

SHAPES = {"mini": dict(L=4, H=256, A=4, batch=16), "base": dict(L=12, H=768, A=12, batch=8)}
SEQ, PRED, VOCAB = 128, 20, 30522


def flops_per_sequence(L, H, **_):
  n = L * (4 * H * H + 2 * H * 4 * H)  # attention q,k,v,o + feed-forward (weights only)
  encoder = SEQ * (6 * n + 12 * L * H * SEQ)
  head = 6 * PRED * (H * H + H * VOCAB)
  return encoder + head


def ensure_peers():
  """Installs the peers once (idempotent), into bench/.venvs only."""
  if not os.path.exists(TFM_PY):
    subprocess.check_call([sys.executable, "-m", "venv", os.path.join(VENVS, "tfm")])
    subprocess.check_call([TFM_PY, "-m", "pip", "install", "-q", "tf-models-official==2.20.0",
                           "tensorflow-cpu==2.20.0"])
  # regex: keras_hub's tokenizers import it at package import (our venv does not carry it).
  if not all(os.path.exists(os.path.join(KHUB_LIB, name)) for name in ("keras_hub", "regex")):
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                           KHUB_LIB, "keras-hub==0.32.0", "kagglehub==1.0.2",
                           "kagglesdk==0.1.28", "regex==2026.11.15"])


COMMON = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import tensorflow as tf
    L, H, A, B, STEPS, ROUNDS = [int(x) for x in sys.argv[1:7]]
    EXACT_GELU = os.environ.get("BENCH_ACT", "gelu_tanh") == "gelu"
    SEQ, PRED, VOCAB = %d, %d, %d
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, VOCAB, (B, SEQ)).astype("int32")
    positions = np.sort(rng.choice(SEQ, (B, PRED)), axis=1).astype("int32")
    labels = rng.integers(1000, VOCAB, (B, PRED)).astype("int32")
    nsp = rng.integers(0, 2, (B, 1)).astype("int32")
    PROBE_REPS = {1024: 10, 2048: 5}  # ~0.15 s and ~0.6 s per window at ~150 GFLOP/s
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
    def timed(step, steps=STEPS, rounds=ROUNDS):
      # Rounds of (matmul peak probe, steps // rounds timed steps), closed by a last probe.
      for _ in range(2):
        float(step())  # trace + warm up
      probe = make_probe()
      per = max(1, steps // rounds)
      probes, seconds = [probe()], []
      for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(per):
          out = step()
        float(out)  # wait for the last step
        seconds.append(time.perf_counter() - t)
        probes.append(probe())
      return {"seq_per_s": B * per * rounds / sum(seconds),
              "round_seq_per_s": [B * per / s for s in seconds], "probe_flops": probes}
""" % (SEQ, PRED, VOCAB))

OURS = COMMON + textwrap.dedent("""
    from bert_keras.training.pretrain import build_optimizer, build_pretrainer
    from bert_keras.training.pretraining_task import PretrainingTask
    from bert_keras.training.trainer import Trainer
    from configs.training import TrainingConfig
    import tempfile
    cfg = TrainingConfig(input_files="x", model_preset="bert_base", model_overrides=dict(
        num_layers=L, hidden_size=H, num_heads=A, intermediate_size=4 * H,
        hidden_act="gelu" if EXACT_GELU else "gelu_tanh"),
        max_seq_length=SEQ, max_predictions_per_seq=PRED, train_batch_size=B,
        jit_compile=os.environ.get("BENCH_JIT") == "1")
    strategy = tf.distribute.get_strategy()
    model, opt = build_pretrainer(cfg), build_optimizer(cfg)
    trainer = Trainer(strategy, model, opt, PretrainingTask(), model_dir=tempfile.mkdtemp(),
                      global_batch_size=B, jit_compile=cfg.jit_compile, jit_loss=True)
    batch = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids),
             "masked_lm_positions": positions, "masked_lm_ids": labels,
             "masked_lm_weights": np.ones((B, PRED), "float32"), "next_sentence_labels": nsp}
    batch = {k: v[None] for k, v in batch.items()}  # (accum=1, batch, ...)
    ds = tf.data.Dataset.from_tensors(batch).repeat()
    it = iter(strategy.experimental_distribute_dataset(ds))
    one = tf.constant(1)
    print(json.dumps(timed(lambda: trainer._train_fn(it, one)["mlm_loss_sum"])))
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
    print(json.dumps(timed(step)))
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
    print(json.dumps(timed(step)))
""")

PEAK = textwrap.dedent("""
    import json, time, tensorflow as tf
    best = 0.0
    for n in (1024, 2048):
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


def run_peer(python, code, shape, steps, extra_env=None, rounds=1):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONPATH=ROOT,
             BENCH_ACT=_HIDDEN_ACT[0])
  env.update(extra_env or {})
  s = SHAPES[shape]
  done = subprocess.run([python, "-c", code, str(s["L"]), str(s["H"]), str(s["A"]),
                         str(s["batch"]), str(steps), str(rounds)], env=env, capture_output=True,
                        text=True, timeout=3600)
  if done.returncode != 0:
    return {"error": done.stderr.strip().splitlines()[-1][:200] if done.stderr else "failed"}
  return json.loads(done.stdout.strip().splitlines()[-1])


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


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--shapes", default="mini,base")
  parser.add_argument("--steps", type=int, default=10, help="timed steps per system and shape")
  parser.add_argument("--rounds", type=int, default=5,
                      help="the timed steps are split into this many rounds, each beside a peak "
                      "probe")
  parser.add_argument("--systems", default="ours,keras_hub,model_garden")
  parser.add_argument("--hidden_act", default="gelu_tanh", choices=("gelu_tanh", "gelu"),
                      help="the GELU every system uses (the peers default to gelu_tanh)")
  parser.add_argument("--out", default=os.path.join(HERE, "out", "bench_pretraining.json"))
  args = parser.parse_args(argv)
  if not 1 <= args.rounds <= args.steps:
    parser.error(f"--rounds must be in [1, --steps={args.steps}], got {args.rounds}")
  _HIDDEN_ACT[0] = args.hidden_act
  ensure_peers()
  load_before = os.getloadavg()  # the host is shared: every table carries the load it ran under
  peak = run_peer(sys.executable, PEAK, "mini", 0)["flops"]
  run = lambda python, code, env=None: (
      lambda shape: run_peer(python, code, shape, args.steps, env, rounds=args.rounds))
  systems = {
      "ours": run(sys.executable, OURS),
      "ours_xla": run(sys.executable, OURS, {"BENCH_JIT": "1"}),
      "keras_hub": run(sys.executable, KHUB, {"PYTHONPATH": KHUB_LIB,
                                              "KERAS_BACKEND": "tensorflow"}),
      "model_garden": run(TFM_PY, TFM, {"PYTHONPATH": ""}),
  }
  per = args.steps // args.rounds
  print(f"hidden_act={args.hidden_act} for every system; {args.rounds} rounds of {per} timed steps")
  print(f"MFU = median over rounds of (round's step FLOP/s) / (fp32 matmul peak probed in the same "
        f"process just before/after the round, best of)")
  print(f"old method, for comparison: one peak probed up front in a separate process: "
        f"{peak / 1e9:.1f} GFLOP/s -> column 'MFU@up-front'")
  print(f"{'shape':6} {'batch':>5} {'system':13} {'seq/s':>8} {'MFU':>6} "
        f"{'peak GFLOP/s med [min-max]':>27} {'MFU@up-front':>12} {'vs best peer':>12}")
  rows, details = [], []
  for shape in args.shapes.split(","):
    results = {name: systems[name](shape) for name in args.systems.split(",")}
    peers = [r["seq_per_s"] for n, r in results.items() if n not in ("ours", "ours_xla")
             and "seq_per_s" in r]
    for name, r in results.items():
      if "seq_per_s" not in r:
        print(f"{shape:6} {SHAPES[shape]['batch']:5d} {name:13} error: {r['error']}")
        continue
      r = with_mfu(r, flops_per_sequence(**SHAPES[shape]), peak)
      g = [p / 1e9 for p in r["probe_flops"]]
      ratio = f"{r['seq_per_s'] / max(peers):.2f}x" if peers and name.startswith("ours") else ""
      span = f"{r['peak_flops_median'] / 1e9:.1f} [{min(g):.1f}-{max(g):.1f}]"
      print(f"{shape:6} {SHAPES[shape]['batch']:5d} {name:13} {r['seq_per_s']:8.2f} "
            f"{100 * r['mfu']:5.1f}% {span:>27} {100 * r['mfu_upfront']:11.1f}% {ratio:>12}")
      details.append(f"  {shape} {name}: probes GFLOP/s " + " ".join(f"{x:.1f}" for x in g)
                     + "; round seq/s " + " ".join(f"{x:.2f}" for x in r["round_seq_per_s"])
                     + "; round MFU " + " ".join(f"{100 * x:.1f}%" for x in r["round_mfu"]))
      rows.append(dict(shape=shape, system=name, **r))
  load_after = os.getloadavg()
  print("load average (1/5/15 min) before: " + "/".join(f"{x:.2f}" for x in load_before)
        + ", after: " + "/".join(f"{x:.2f}" for x in load_after))
  print("per round (probe, steps, probe, ...):")
  print("\n".join(details))
  os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
  tmp = args.out + ".tmp"
  with open(tmp, "w", encoding="utf-8") as f:
    json.dump({"peak_flops": peak, "peak_method": "peak_flops: up-front, separate process; row "
               "mfu: in-process probes beside the steps, median of per-round ratios",
               "hidden_act": args.hidden_act, "load_before": load_before,
               "load_after": load_after, "steps": args.steps, "rounds": args.rounds,
               "rows": rows}, f, indent=2)
  os.replace(tmp, args.out)


if __name__ == "__main__":
  main()
