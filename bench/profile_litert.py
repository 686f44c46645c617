"""Where a LiteRT export's serving time goes, and .tflite files against each other, on real text.

The workloads of bench_serving_real.py (the 200 polarity sentences one per call in file order,
Lee documents cut at --seq_length one per call, seeded mixed batches of --batch_size), served by
bert_keras.serving.litert with --litert_threads. Every file runs every workload in each of --rounds
interleaved rounds (the host is shared: compare files within one run). Per file and workload: p50
wall and CPU ms per call, and the CPU split into tokenization (`tokenize`), the interpreter (resize,
allocate, invoke: `_run`) and the rest (packing, decoding). Outputs of every file are checked
against the first fp32 file's within --atol, before timing.

  python bench/profile_litert.py --files=before.tflite,after.tflite --rounds=3
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_serving_real  # noqa: E402  (its workloads and flags: --workloads, --batch_size, ...)

FLAGS = flags.FLAGS
flags.DEFINE_list("files", [], ".tflite files written by export_model.py --format=litert.")
flags.DEFINE_float("atol", 1e-5, "Largest difference allowed between the files' float outputs.")


class Timed:
  """Wraps a model's method to sum the CPU seconds spent in it."""

  def __init__(self, model, name: str):
    self.seconds, self.method = 0.0, getattr(model, name)
    setattr(model, name, self)

  def __call__(self, *args, **kwargs):
    start = time.process_time()
    try:
      return self.method(*args, **kwargs)
    finally:
      self.seconds += time.process_time() - start


def profile(model, batches) -> dict:
  """Wall and CPU seconds of each call on `batches`, with the CPU of its parts."""
  parts = {name: Timed(model, name) for name in ("tokenize", "_run")}
  out = {"wall": [], "cpu": [], "tokenize": [], "interpreter": []}
  for batch in batches:
    before = {name: part.seconds for name, part in parts.items()}
    start, start_cpu = time.perf_counter(), time.process_time()
    model.serve(batch)
    out["wall"].append(time.perf_counter() - start)
    out["cpu"].append(time.process_time() - start_cpu)
    out["tokenize"].append(parts["tokenize"].seconds - before["tokenize"])
    out["interpreter"].append(parts["_run"].seconds - before["_run"])
  for name, part in parts.items():
    setattr(model, name, part.method)
  return out


def check_same(models: dict, workloads: dict) -> None:
  """The fp32 files' float outputs equal the first fp32 file's within --atol (per-position outputs
  at real positions: past input_mask they are padding). int8 files are not compared."""
  fp32 = [path for path, model in models.items() if model.quantize == "none"]
  for name in fp32[1:]:
    first = fp32[0]
    for batches in workloads.values():
      for batch in batches[:3]:
        expected, actual = models[first].serve(batch), models[name].serve(batch)
        mask = expected.get("input_mask", np.ones(1)).astype(bool)
        for key, value in expected.items():
          if value.dtype.kind != "f":
            continue
          got = actual[key]
          if value.ndim == 4:  # (batch, layers, seq, hidden)
            value, got = value.transpose(0, 2, 1, 3), got.transpose(0, 2, 1, 3)
          if value.ndim >= 3:
            value, got = value[mask], got[mask]
          worst = float(np.abs(got - value).max())
          assert worst <= FLAGS.atol, f"{name} {key} differs from {first} by {worst}"


def main(argv):
  del argv
  from bert_keras import resources
  from bert_keras.serving import litert
  from bert_keras.text.bert_tokenizer import BertTokenizer

  tokenizer = BertTokenizer(vocab_path=os.path.join(resources.minilm_dir(), "vocab.txt"),
                            lower_case=True)
  workloads = bench_serving_real.real_workloads(tokenizer, FLAGS.seq_length, FLAGS.batch_size)
  models = {path: litert.load(path, num_threads=FLAGS.litert_threads) for path in FLAGS.files}
  check_same(models, workloads)
  for model in models.values():  # warm-up: every bucket once
    for batches in workloads.values():
      for batch in batches:
        model.serve(batch)
  times = {(path, name): {} for path in models for name in workloads}
  for _ in range(FLAGS.rounds):
    for name, batches in workloads.items():
      for path, model in models.items():
        for key, values in profile(model, batches).items():
          times[path, name].setdefault(key, []).extend(values)
  print(f"load average {os.getloadavg()[0]:.1f}; {FLAGS.litert_threads} LiteRT threads; "
        f"{FLAGS.rounds} rounds; ms per call (p50; the parts: CPU medians)")
  print("| file | workload | wall p50 | CPU p50 | tokenize | interpreter | rest |")
  print("|---|---|---|---|---|---|---|")
  for (path, name), t in times.items():
    ms = {key: 1000 * float(np.median(values)) for key, values in t.items()}
    rest = 1000 * float(np.median(np.array(t["cpu"]) - np.array(t["tokenize"])
                                  - np.array(t["interpreter"])))
    print(f"| {os.path.basename(path)} | {name} | {ms['wall']:.2f} | {ms['cpu']:.2f} | "
          f"{ms['tokenize']:.2f} | {ms['interpreter']:.2f} | {rest:.2f} |")


if __name__ == "__main__":
  app.run(main)
