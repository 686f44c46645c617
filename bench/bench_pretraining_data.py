"""Benchmark (not a test): our Beam create_pretraining_data vs tf-models-official's, same corpus/params;
and how the memory of our Beam jobs (pretraining examples, vocabulary learner, corpus ingestion)
grows with the corpus.

Corpus: Google-format text (one sentence a line, blank line between documents) made from the embedded
shortened English Wikipedia dump with our wiki reader (2.5 MB); k-times corpora are k hard links of
it (distinct file names, so distinct documents for both systems). Vocabulary: the real
bert-base-uncased one; parameters: max_seq_length 128, max_predictions_per_seq 20, dupe_factor 5,
seed 12345. Both systems run as the command users run (`python scripts/create_pretraining_data.py`,
`python -m official.nlp.data.create_pretraining_data` from bench/.venvs/tfm, installed by this
script), end to end including interpreter and library start-up, back to back in one run.
`--jobs` adds our other Beam jobs on the same corpora, as users run them: `scripts/learn_vocab.py`
(vocab) and the corpus_ingestion component (`python -m components.cli corpus_ingestion`).

Measured per run: wall time, throughput in MB of raw text per second, CPU seconds (user + sys summed
over the process tree: the fair comparison when other jobs load the machine), peak RSS summed over
the process tree (our multi-process DirectRunner has workers), what was written (instances,
vocabulary tokens, documents). Per job and mode: peak RSS of the largest scale over the smallest,
and the slope between the two largest scales in MB of RSS per MB of corpus (flat memory: ~0).

  .venv/bin/python bench/bench_pretraining_data.py [--scales 1,4,16] [--peer_scales 1,2] \
      [--jobs examples,vocab,ingestion] [--modes in_memory,multi_processing] [--workers 2] \
      [--dupe_factor 5] [--max_documents 0] [--output_dir bench/out/pretraining_data]

`--scales 1,16,400 --peer_scales=` is the 1 GB point (400 x 2.5 MB; ~10 GB of disk for the
examples' staging files). `--peer_scales=` (empty) measures ours alone and installs nothing;
tests/bench runs it that way on a few articles as a smoke check.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import re
import shutil
import subprocess
import sys
import time

import psutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
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


def write_google_corpus(path: str, max_documents: int = 0) -> int:
  """The Wikipedia dump (its first `max_documents` articles if > 0) as Google-format text; returns
  its size in bytes."""
  sys.path.insert(0, ROOT)
  from bert_keras import resources  # pylint: disable=g-import-not-at-top
  from bert_keras.data.wikipedia_reader import iter_wiki_pages, wiki_page_to_document

  if not os.path.exists(path):
    drop = lambda reason, where: None  # the reader's (reason, where) callback; nothing counted here
    tmp = path + ".tmp"
    documents = 0
    with bz2.open(resources.wikipedia_dump_path()) as f, open(tmp, "w", encoding="utf-8") as out:
      for page in iter_wiki_pages(f, drop):
        if max_documents and documents >= max_documents:
          break
        for _, sentences in wiki_page_to_document(page, "enwiki", drop):
          out.write("\n".join(sentences) + "\n\n")
          documents += 1
    os.replace(tmp, path)
  return os.path.getsize(path)


def scaled_corpus(corpus: str, scale: int, out: str) -> str:
  """A directory of `scale` hard links of `corpus` under `out`; returns the glob of its files."""
  if scale == 1:
    return corpus
  directory = os.path.join(out, f"corpus_{scale}x")
  os.makedirs(directory, exist_ok=True)
  for i in range(scale):
    name = os.path.join(directory, f"part_{i:03d}.txt")
    if not os.path.exists(name):
      os.link(corpus, name)
  return os.path.join(directory, "part_*.txt")


def measure(cmd, env=None):
  """Runs `cmd`; returns (wall s, peak RSS MB summed over the process tree, CPU s of the tree, stderr).

  RSS and CPU are polled every 20 ms (children's CPU also from the kernel's reaped-children sum).
  """
  start = time.perf_counter()
  proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
  root = psutil.Process(proc.pid)
  peak = 0
  cpu = {}
  stderr_chunks = []
  import threading  # pylint: disable=g-import-not-at-top
  reader = threading.Thread(target=lambda: stderr_chunks.append(proc.stderr.read()), daemon=True)
  reader.start()
  while proc.poll() is None:
    rss = 0
    try:
      for p in [root] + root.children(recursive=True):
        try:
          rss += p.memory_info().rss
          times = p.cpu_times()
          cpu[p.pid] = times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
          pass
    except psutil.Error:
      pass
    peak = max(peak, rss)
    time.sleep(0.02)
  seconds = time.perf_counter() - start
  reader.join()
  stderr = "".join(stderr_chunks)
  if proc.returncode != 0:
    raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-3000:]}")
  return seconds, peak / 2 ** 20, sum(cpu.values()), stderr


def our_job(job, pattern, out_dir, flags, examples_cmd, vocab):
  """(command, function returning what it wrote) of one of our jobs on the corpus `pattern`."""
  if job == "examples":
    def instances():
      with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)["instances"]
    return examples_cmd + flags + [f"--input_files={pattern}", f"--output_dir={out_dir}"], instances
  if job == "vocab":
    def tokens():
      with open(os.path.join(out_dir, "vocab.txt"), encoding="utf-8") as f:
        return sum(1 for _ in f)
    return [sys.executable, os.path.join(ROOT, "scripts", "learn_vocab.py"), "--input_format=bert_text",
            f"--input_files={pattern}", f"--output_dir={out_dir}", "--vocab_size=8000"] + flags, tokens
  if job == "ingestion":
    def documents():
      import glob  # pylint: disable=g-import-not-at-top
      from bert_keras.data.corpus_ingestion import count_corpus  # pylint: disable=g-import-not-at-top
      return count_corpus(glob.glob(os.path.join(out_dir, "corpus", "*.txt")))["documents"]
    return [sys.executable, "-m", "components.cli", "corpus_ingestion",
            f"--output_artifact=corpus={os.path.join(out_dir, 'corpus')}", f"--param=bert_text_corpora={json.dumps([pattern])}",
            "--param=num_shards=8", f"--beam_pipeline_args={' '.join(flags)}"], documents
  raise SystemExit(f"--jobs: unknown job {job!r}; expected examples, vocab, ingestion")


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--workers", type=int, default=2)
  parser.add_argument("--dupe_factor", type=int, default=5)
  parser.add_argument("--jobs", default="examples",
                      help="comma-separated jobs of ours: examples, vocab, ingestion")
  parser.add_argument("--modes", default="in_memory,multi_processing",
                      help="comma-separated DirectRunner running modes to measure")
  parser.add_argument("--scales", default="1,2", help="corpus sizes (times the dump) for our runs")
  parser.add_argument("--peer_scales", default="1,2",
                      help="corpus sizes for the peer's runs ('' = no peer, nothing installed)")
  parser.add_argument("--max_documents", type=int, default=0,
                      help="use only the dump's first N articles (0 = all; for a quick check)")
  parser.add_argument("--output_dir", default=os.path.join(HERE, "out", "pretraining_data"))
  args = parser.parse_args()
  out = args.output_dir
  os.makedirs(out, exist_ok=True)
  sys.path.insert(0, ROOT)
  from bert_keras import resources  # pylint: disable=g-import-not-at-top

  vocab = resources.uncased_vocab_path()
  corpus = os.path.join(out, f"wiki_google_{args.max_documents or 'all'}.txt")
  size = write_google_corpus(corpus, args.max_documents)
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
  # The peer's casing flag is Model Garden's --do_lower_case; ours --lower_case.
  common = ["--vocab_file", vocab, "--max_seq_length=128",
            "--max_predictions_per_seq=20", "--masked_lm_prob=0.15", "--short_seq_prob=0.1",
            f"--dupe_factor={args.dupe_factor}", "--seed=12345"]
  scales = sorted({int(s) for s in args.scales.split(",")})
  peer_scales = sorted({int(s) for s in args.peer_scales.split(",") if s})
  load_before = os.getloadavg()

  rows = []  # (system, scale, label, bytes, seconds, rss, cpu, instances)
  peer_python = ensure_peer_venv() if peer_scales else None
  ours = [sys.executable, os.path.join(ROOT, "scripts", "create_pretraining_data.py"),
          "--input_format=bert_text", "--num_shards=8", "--lower_case=true"] + common
  for scale in sorted(set(scales) | set(peer_scales)):
    pattern = scaled_corpus(corpus, scale, out)
    if scale in peer_scales:
      peer = [peer_python, "-m", "official.nlp.data.create_pretraining_data", "--input_file", pattern,
              "--output_file", os.path.join(out, f"peer_{scale}x.tfrecord"), "--do_lower_case=true"] + common
      seconds, rss, cpu, stderr = measure(peer, env)
      found = re.findall(r"Wrote (\d+) total instances", stderr)
      rows.append(("peer", scale, "tf-models-official 2.20 (1 process)", scale * size, seconds, rss, cpu,
                   int(found[-1]) if found else -1))
    if scale not in scales:
      continue
    for job in args.jobs.split(","):
      for mode in args.modes.split(","):
        workers = 1 if mode == "in_memory" else args.workers
        flags = [f"--direct_running_mode={mode}", f"--direct_num_workers={workers}"]
        out_dir = os.path.join(out, f"ours_{job}_{mode}_{scale}x")
        cmd, written = our_job(job, pattern, out_dir, flags, ours, vocab)
        seconds, rss, cpu, _ = measure(cmd, env)
        print(f"{job} {mode} {scale}x: {seconds:.1f} s, peak RSS {rss:.0f} MB, {cpu:.1f} CPU-s", flush=True)
        name = "ours" if job == "examples" else f"ours {job}"
        rows.append((f"ours:{job}:{mode}", scale, f"{name}, DirectRunner {mode} x{workers}",
                     scale * size, seconds, rss, cpu, written()))
        if job != "examples":
          shutil.rmtree(out_dir, ignore_errors=True)  # the examples' shards stay for a comparison
  load_after = os.getloadavg()

  print(f"\ncorpus: {size / 1e6:.2f} MB Google-format text from the Wikipedia dump (k x = k copies as "
        f"distinct documents); dupe_factor {args.dupe_factor}, seq 128, real uncased vocab; "
        f"{os.cpu_count()} cores; load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
  print(f"{'run':<42} {'corpus':>6} {'MB':>6} {'wall s':>7} {'MB/s':>6} {'vs peer':>8} {'CPU s':>6} "
        f"{'CPU vs peer':>11} {'peak RSS MB':>11} {'instances':>9}")
  peer_rows = {r[1]: r for r in rows if r[0] == "peer"}
  for system, scale, label, nbytes, seconds, rss, cpu, instances in rows:
    peer = peer_rows.get(scale)
    rate = nbytes / seconds
    vs = f"{rate / (peer[3] / peer[4]):7.2f}x" if peer else f"{'-':>8}"
    cpu_vs = f"{(nbytes / cpu) / (peer[3] / peer[6]):10.2f}x" if peer else f"{'-':>11}"
    print(f"{label:<42} {scale:>5}x {nbytes / 1e6:6.2f} {seconds:7.1f} {rate / 1e6:6.3f} {vs} {cpu:6.1f} "
          f"{cpu_vs} {rss:11.0f} {instances:>9}")
  for system in sorted({r[0] for r in rows}):
    mine = sorted((r for r in rows if r[0] == system), key=lambda r: r[1])
    if len(mine) >= 2:
      (small, big), (before, last) = (mine[0], mine[-1]), mine[-2:]
      slope = (last[5] - before[5]) / ((last[3] - before[3]) / 1e6)
      print(f"{system}: peak RSS {' / '.join(f'{r[1]}x {r[5]:.0f} MB' for r in mine)}; "
            f"{big[1]}x / {small[1]}x = {big[5] / small[5]:.2f}; slope {before[1]}x -> {last[1]}x = "
            f"{slope:.2f} MB of RSS per MB of corpus")


if __name__ == "__main__":
  main()
