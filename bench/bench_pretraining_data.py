"""Benchmark (not a test): our Beam create_pretraining_data vs tf-models-official's, same corpus/params.

Corpus: Google-format text (one sentence a line, blank line between documents) made from the embedded
shortened English Wikipedia dump with our wiki reader; vocabulary: the real bert-base-uncased one;
parameters: max_seq_length 128, max_predictions_per_seq 20, dupe_factor 5, seed 12345.
Rows: the peer (official/nlp/data/create_pretraining_data.py, TF 2.20, in bench/.venvs/tfm, installed
by this script), ours at 1x, ours at 2x the corpus (flat memory). Measured: wall time, throughput in
MB of raw text per second, peak RSS summed over the whole process tree (our DirectRunner has workers).

  .venv/bin/python bench/bench_pretraining_data.py [--workers 2] [--dupe_factor 5] \
      [--modes in_memory,multi_processing]

CPU seconds (user + sys summed over the process tree) are the fair comparison on a loaded machine:
every multi_processing worker imports TensorFlow and builds the tokenizer (~10 CPU s, ~1 GB each),
which on a small corpus costs more than the work it parallelizes; in_memory is one process.
"""

from __future__ import annotations

import argparse
import bz2
import os
import subprocess
import sys
import time

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "pretraining_data")
PEER_VENV = os.path.join(HERE, ".venvs", "tfm")
PEER_PACKAGE = "tf-models-official"


def ensure_peer_venv() -> str:
  """Creates bench/.venvs/tfm with tf-models-official (pins TF 2.20); returns its python."""
  python = os.path.join(PEER_VENV, "bin", "python")
  probe = [python, "-c", "import official.nlp.data.create_pretraining_data"]
  if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
    return python
  subprocess.run([sys.executable, "-m", "venv", PEER_VENV], check=True)
  install = subprocess.run([os.path.join(PEER_VENV, "bin", "pip"), "install", "-q", PEER_PACKAGE],
                           capture_output=True, text=True)
  if install.returncode != 0:
    raise SystemExit(f"installing {PEER_PACKAGE} failed:\n{install.stderr[-3000:]}")
  subprocess.run(probe, check=True)
  return python


def write_google_corpus(path: str) -> int:
  """The Wikipedia dump as Google-format text; returns its size in bytes."""
  sys.path.insert(0, ROOT)
  from bert_keras import resources  # pylint: disable=g-import-not-at-top
  from bert_keras.data.wikipedia_reader import iter_wiki_pages, wiki_page_to_document

  if not os.path.exists(path):
    drop = lambda reason: None
    tmp = path + ".tmp"
    with bz2.open(resources.wikipedia_dump_path()) as f, open(tmp, "w", encoding="utf-8") as out:
      for page in iter_wiki_pages(f, drop):
        for _, sentences in wiki_page_to_document(page, "enwiki", drop):
          out.write("\n".join(sentences) + "\n\n")
    os.replace(tmp, path)
  return os.path.getsize(path)


def measure(cmd, env=None):
  """Runs `cmd`; returns (wall seconds, peak RSS MB summed over the process tree, CPU seconds of the tree).

  RSS and CPU are polled every 50 ms; CPU seconds do not depend on what else the machine runs.
  """
  start = time.perf_counter()
  proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
  root = psutil.Process(proc.pid)
  peak = 0
  cpu = {}
  while proc.poll() is None:
    rss = 0
    try:
      for p in [root] + root.children(recursive=True):
        try:
          rss += p.memory_info().rss
          times = p.cpu_times()
          cpu[p.pid] = times.user + times.system
        except psutil.Error:
          pass
    except psutil.Error:
      pass
    peak = max(peak, rss)
    time.sleep(0.05)
  seconds = time.perf_counter() - start
  stderr = proc.stderr.read()
  if proc.returncode != 0:
    raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-3000:]}")
  return seconds, peak / 2 ** 20, sum(cpu.values())


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--workers", type=int, default=2)
  parser.add_argument("--dupe_factor", type=int, default=5)
  parser.add_argument("--modes", default="in_memory,multi_processing",
                      help="comma-separated DirectRunner running modes to measure")
  args = parser.parse_args()
  os.makedirs(OUT, exist_ok=True)
  sys.path.insert(0, ROOT)
  from bert_keras import resources  # pylint: disable=g-import-not-at-top

  vocab = resources.uncased_vocab_path()
  corpus = os.path.join(OUT, "wiki_google.txt")
  size = write_google_corpus(corpus)
  corpus_2x = os.path.join(OUT, "corpus_2x")
  os.makedirs(corpus_2x, exist_ok=True)
  for name in ("part_a.txt", "part_b.txt"):  # same text twice, distinct documents (ids from file names)
    if not os.path.exists(os.path.join(corpus_2x, name)):
      os.link(corpus, os.path.join(corpus_2x, name))
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
  common = ["--vocab_file", vocab, "--do_lower_case=true", "--max_seq_length=128",
            "--max_predictions_per_seq=20", "--masked_lm_prob=0.15", "--short_seq_prob=0.1",
            f"--dupe_factor={args.dupe_factor}", "--random_seed=12345"]

  rows = []
  peer_python = ensure_peer_venv()
  peer = [peer_python, "-m", "official.nlp.data.create_pretraining_data", "--input_file", corpus,
          "--output_file", os.path.join(OUT, "peer.tfrecord")] + common
  rows.append(("tf-models-official 2.20 (1 process)", size) + measure(peer, env))

  ours = [sys.executable, os.path.join(ROOT, "scripts", "create_pretraining_data.py"),
          "--input_format=bert_text", "--num_shards=8"] + common
  for mode in args.modes.split(","):
    workers = 1 if mode == "in_memory" else args.workers
    flags = [f"--direct_running_mode={mode}", f"--direct_num_workers={workers}"]
    for scale, pattern, nbytes in (("1x", corpus, size), ("2x", os.path.join(corpus_2x, "*.txt"), 2 * size)):
      out_dir = os.path.join(OUT, f"ours_{mode}_{scale}")
      label = f"ours, DirectRunner {mode} x{workers}, {scale} corpus"
      rows.append((label, nbytes) + measure(ours + flags + [f"--input_file={pattern}", f"--output_dir={out_dir}"], env))

  print(f"\ncorpus: {size / 1e6:.2f} MB Google-format text from the Wikipedia dump; dupe_factor "
        f"{args.dupe_factor}, seq 128, real uncased vocab; {os.cpu_count()} cores")
  print(f"{'run':<52} {'MB':>6} {'seconds':>8} {'MB/s':>7} {'vs peer':>8} {'CPU s':>7} {'CPU vs peer':>11} "
        f"{'peak RSS MB':>12}")
  peer_rate = rows[0][1] / rows[0][2]
  peer_cpu_rate = rows[0][1] / rows[0][4]
  for label, nbytes, seconds, rss, cpu in rows:
    rate = nbytes / seconds
    print(f"{label:<52} {nbytes / 1e6:6.2f} {seconds:8.1f} {rate / 1e6:7.3f} {rate / peer_rate:7.2f}x "
          f"{cpu:7.1f} {nbytes / cpu / peer_cpu_rate:10.2f}x {rss:12.0f}")
  for i in range(1, len(rows), 2):
    print(f"peak RSS 2x / 1x ({rows[i][0].split(',')[1].strip()}): {rows[i + 1][3] / rows[i][3]:.2f}")


if __name__ == "__main__":
  main()
