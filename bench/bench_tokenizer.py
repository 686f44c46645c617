"""WordPiece throughput: our in-graph BertTokenizer vs Hugging Face `tokenizers` vs the pure-Python original.

All three tokenize the same real text (every non-empty line of the embedded Wikipedia dump and the Lee
corpora, ~6.4 MB) with the real bert-base-uncased vocabulary, without special tokens. Each
(system, threads, batch size) runs in its own process so thread settings take effect:
  * ours: `BertTokenizer.tokenize` in a `tf.function` (traced before timing) called on every batch
    from `threads` Python threads, with TF intra/inter-op threads = threads;
  * hf: `tokenizers.Tokenizer` from all-MiniLM-L6-v2's tokenizer.json, `encode_batch`, RAYON_NUM_THREADS;
  * python: `ReferenceTokenizer` (the original's algorithm in pure Python), one thread, line by line.
Every run also counts the lines whose ids equal the pure-Python reference's.

  .venv/bin/python bench/bench_tokenizer.py [--threads=1,2] [--batch_sizes=64,1024,8192]
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_list("threads", ["1", "2"], "Thread counts to measure.")
flags.DEFINE_list("batch_sizes", ["64", "1024", "8192"], "Lines per batch for ours and hf.")
flags.DEFINE_integer("max_lines", 0, "Use only the first N lines (0 = all).")
flags.DEFINE_string("worker", "", "Internal: run one measurement (ours|hf|python) and print JSON.")
flags.DEFINE_integer("worker_threads", 1, "Internal.")
flags.DEFINE_integer("worker_batch", 1024, "Internal.")
flags.DEFINE_string("reference_ids", "", "Internal: pickle of the reference ids.")


def load_lines(max_lines: int) -> list[str]:
  import bz2
  from bert_keras import resources
  with bz2.open(resources.wikipedia_dump_path(), "rt", encoding="utf-8") as f:
    lines = f.read().split("\n")
  for path in (resources.lee_background_path(), resources.lee_documents_path(),
               resources.polarity_path()):
    with open(path, "rb") as f:  # a few Latin-1 bytes: decoded the original's way, dropped
      lines.extend(f.read().decode("utf-8", "ignore").split("\n"))
  lines = [line for line in lines if line.strip()]
  return lines[:max_lines] if max_lines else lines


def run_ours(lines, threads, batch_size):
  import concurrent.futures
  import tensorflow as tf
  tf.config.threading.set_intra_op_parallelism_threads(threads)
  tf.config.threading.set_inter_op_parallelism_threads(threads)
  from bert_keras import resources
  from bert_keras.text.bert_tokenizer import BertTokenizer
  tokenizer = BertTokenizer(resources.uncased_vocab_path())
  tokenize = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
  batches = [tf.constant(lines[i:i + batch_size]) for i in range(0, len(lines), batch_size)]
  tokenize(batches[0])  # traces and optimises the graph outside the timing
  start = time.perf_counter()
  with concurrent.futures.ThreadPoolExecutor(threads) as pool:  # TF releases the GIL
    results = list(pool.map(tokenize, batches))
  seconds = time.perf_counter() - start
  return [row for batch in results for row in batch.to_list()], seconds


def run_hf(lines, threads, batch_size):
  from tokenizers import Tokenizer
  from bert_keras import resources
  tokenizer = Tokenizer.from_file(os.path.join(resources.minilm_dir(), "tokenizer.json"))
  tokenizer.no_truncation()
  tokenizer.no_padding()
  tokenizer.encode_batch(lines[:batch_size], add_special_tokens=False)  # warm-up
  start = time.perf_counter()
  encodings = []
  for i in range(0, len(lines), batch_size):
    encodings.extend(tokenizer.encode_batch(lines[i:i + batch_size], add_special_tokens=False))
  seconds = time.perf_counter() - start
  return [e.ids for e in encodings], seconds


def run_python(lines):
  from bert_keras import resources
  from bert_keras.text.reference_tokenizer import ReferenceTokenizer
  from bert_keras.text.vocab import load_vocab
  tokenizer = ReferenceTokenizer(load_vocab(resources.uncased_vocab_path()))
  start = time.perf_counter()
  ids = [tokenizer.encode(line) for line in lines]
  return ids, time.perf_counter() - start


def worker() -> None:
  lines = load_lines(FLAGS.max_lines)
  if FLAGS.worker == "ours":
    ids, seconds = run_ours(lines, FLAGS.worker_threads, FLAGS.worker_batch)
  elif FLAGS.worker == "hf":
    ids, seconds = run_hf(lines, FLAGS.worker_threads, FLAGS.worker_batch)
  else:
    ids, seconds = run_python(lines)
    with open(FLAGS.reference_ids, "wb") as f:
      pickle.dump(ids, f)
  with open(FLAGS.reference_ids, "rb") as f:
    reference = pickle.load(f)
  agree = sum(a == b for a, b in zip(ids, reference))
  print(json.dumps({"tokens": sum(map(len, ids)), "seconds": seconds, "agree": agree,
                    "lines": len(lines), "bytes": sum(len(l.encode()) for l in lines)}))


def measure(system: str, threads: int, batch: int, reference_ids: str) -> dict:
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", RAYON_NUM_THREADS=str(threads),
             TOKENIZERS_PARALLELISM="true", OMP_NUM_THREADS=str(threads))
  command = [sys.executable, os.path.abspath(__file__), f"--worker={system}",
             f"--worker_threads={threads}", f"--worker_batch={batch}",
             f"--reference_ids={reference_ids}", f"--max_lines={FLAGS.max_lines}"]
  out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
  return json.loads(out.strip().splitlines()[-1])


def main(argv) -> None:
  del argv
  if FLAGS.worker:
    worker()
    return
  threads = [int(t) for t in FLAGS.threads]
  batches = [int(b) for b in FLAGS.batch_sizes]
  with tempfile.TemporaryDirectory() as tmp:
    reference_ids = os.path.join(tmp, "reference.pkl")
    python = measure("python", 1, 1, reference_ids)
    rows = [("python (original algorithm)", 1, 1, python)]
    for t in threads:
      for b in batches:
        hf = measure("hf", t, b, reference_ids)
        ours = measure("ours", t, b, reference_ids)
        rows += [("hf tokenizers", t, b, hf), ("ours (BertTokenizer)", t, b, ours)]
  python_rate = python["tokens"] / python["seconds"]
  print(f"{python['lines']} lines, {python['bytes'] / 1e6:.1f} MB of real text, "
        f"{python['tokens']} reference tokens")
  print(f"{'system':<28} {'threads':>7} {'batch':>6} {'tokens':>9} {'seconds':>8} {'tokens/s':>11} "
        f"{'x hf':>6} {'x python':>8} {'ids == original':>16}")
  hf_rate = {}
  for name, t, b, r in rows:
    rate = r["tokens"] / r["seconds"]
    if name.startswith("hf"):
      hf_rate[(t, b)] = rate
    vs_hf = f"{rate / hf_rate[(t, b)]:.2f}" if (t, b) in hf_rate and not name.startswith("python") \
        else "-"
    print(f"{name:<28} {t:>7} {b:>6} {r['tokens']:>9} {r['seconds']:>8.2f} {rate:>11,.0f} "
          f"{vs_hf:>6} {rate / python_rate:>8.1f} {r['agree']:>8}/{r['lines']}")


if __name__ == "__main__":
  app.run(main)
