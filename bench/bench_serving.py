"""Serving speed of the text-in SavedModel, tokenization included, beside model-only peers.

For BERT-mini and BERT-Base shapes at sequence length 128. Both libraries run with their own
default threading, what every user who loads the SavedModel or builds the torch model gets (on the
2-core machines measured: TF intra-op 2 / inter-op 2, torch 2 / 2); the table prints what each
used. --tf_threads adds rows for other TF settings (default: also intra 2 / inter 1, the setting
earlier runs pinned), each in its own process, since TF fixes its thread pools at start-up. Paths:
  text-in SavedModel (V)  raw strings -> outputs through the `serving_default` signature (what
                          TF Serving calls; in Python `m.serve(...)` adds 0.3-0.6 ms of argument
                          handling at batch 1): in-graph tokenizer + packer + encoder, for each
                          export variant V of --variants: `graph` (plain TF graph, grappler and
                          oneDNN kernels; export_task_model's default), `xla` (jit_compile=True),
                          `auto` (XLA for one sequence, the graph for batches); a `:gN` suffix
                          exports with head_groups=N (the default export splits every Transformer
                          block into 2 groups of heads, kernels/cpu_transformer_block.py, below
                          hidden size 768 and leaves wider models unsplit; `graph:g1` is the
                          unsplit graph, `graph:g2` the split one)
  ids-in SavedModel (V)   the same SavedModel's `serving_tokenized` signature on packed ids
  tokenize outside        the same tokenizer + packer alone (what a server that tokenizes
                          elsewhere pays before calling the model)
  torch BertModel         Hugging Face transformers on torch CPU, model only (packed ids), run in
                          its own virtualenv bench/.venvs/torch (bench/torch_peer.py creates it:
                          pip install torch==2.13.0 transformers; 2.13.0 is the CPU build)
The model paths do the same work per call: each returns the pooled output, the sequence output and
every layer's output (torch: output_hidden_states=True) and hands them over as numpy arrays that
view the result buffers (np.asarray for TF, Tensor.numpy() for torch; neither copies).
Latency: batch 1, p50 and p99 over --latency_runs calls. Throughput: batch 32, sequences/s from the
median of --throughput_runs calls. All paths, torch included (a child process of the torch venv
that times the calls it is asked for), are timed in interleaved rounds (each round runs every path
in turn), so load from other processes hits them alike. Each row also gives the process CPU time
per call (user + system, all threads), which load changes much less than wall time.
"tokenization cost" = text-in minus ids-in of the same SavedModel, at batch 1 and 32.
Inputs: real news documents (Lee corpus) long enough to fill 128 pieces. Weights are random
(speed does not depend on them); the encoder export is the feature-extraction one (pooled,
sequence and all layers' outputs).

  python bench/bench_serving.py                       # both shapes, ~20 min on 2 cores
  python bench/bench_serving.py --models=bert_mini --latency_runs=50 --variants=graph,graph:g1 \
      --tf_threads=default
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402

from torch_peer import DEFAULT_VENV, TorchServer, ensure_torch_venv  # noqa: E402 (bench/)

FLAGS = flags.FLAGS
flags.DEFINE_list("models", ["bert_mini", "bert_base"], "Model presets (bert_keras/configs/model.py).")
flags.DEFINE_integer("seq_length", 128, "Packed sequence length.")
flags.DEFINE_list("tf_threads", ["default", "2/1"],
                  "TF thread settings timed, each `default` (TF's own choice) or INTRA/INTER; each "
                  "runs in its own process. The first is the headline and times every variant, "
                  "the others the first variant only.")
flags.DEFINE_string("child_output", "", "Internal: run one --tf_threads setting, write JSON here.")
flags.DEFINE_integer("batch_size", 32, "Throughput batch size.")
flags.DEFINE_integer("latency_runs", 0, "Batch-1 calls timed (0 = 100 for small, 30 for base).")
flags.DEFINE_integer("throughput_runs", 0, "Batch calls timed (0 = 10 for small, 3 for base).")
flags.DEFINE_list("variants", ["graph", "graph:g1", "xla", "auto"],
                  "Export variants timed side by side: graph (jit_compile=False), xla (True), "
                  "auto (XLA for a single sequence, the graph for batches); `:gN` exports with "
                  "head_groups=N (default: export_task_model's).")
flags.DEFINE_integer("rounds", 5, "Interleaved timing rounds (runs are split evenly over them).")
flags.DEFINE_bool("torch", True, "Also measure Hugging Face BertModel on torch CPU.")
flags.DEFINE_string("torch_venv", DEFAULT_VENV, "Virtualenv for torch.")
flags.DEFINE_string("output_file", "", "Also write the results here.")

_TORCH_SCRIPT = r"""
import numpy as np

model = bert_model()
rng = np.random.default_rng(0)

def inputs(batch):
  ids = torch.tensor(rng.integers(1000, spec["vocab_size"], (batch, spec["seq_length"])))
  return dict(input_ids=ids, attention_mask=torch.ones_like(ids),
              token_type_ids=torch.zeros_like(ids))

def call(x):
  return outputs(model(**x, output_hidden_states=True))

x = {"latency": inputs(1), "throughput": inputs(spec["batch_size"])}
with torch.inference_mode():
  for key, warmup in (("latency", 3), ("throughput", 1)):
    for _ in range(warmup):
      call(x[key])
  serve({"torch": torch.__version__, "threads": [torch.get_num_threads(),
                                                torch.get_num_interop_threads()]},
        call, x.get)
"""


def lee_texts(count: int) -> list[str]:
  from bert_keras import resources
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    docs = [line.strip() for line in f if len(line.split()) > 150]
  return docs[:count]


def timed_locally(fn):
  """A callable -> timer(runs): wall and CPU seconds of each of `runs` calls in this process."""
  def timer(runs: int):
    times, cpu = [], []
    for _ in range(runs):
      start, start_cpu = time.perf_counter(), time.process_time()
      fn()
      times.append(time.perf_counter() - start)
      cpu.append(time.process_time() - start_cpu)
    return times, cpu
  return timer


def interleaved(paths: dict, latency_runs: int, throughput_runs: int, rounds: int) -> dict:
  """name -> (batch-1 timer, batch timer) -> name -> wall and CPU seconds of every timed call.

  A timer takes a number of calls and returns their wall and CPU seconds (`timed_locally`, or
  TorchServer's, which runs them in the torch process). Each round times a share of every
  path's batch-1 calls, then of its batch calls, path after path, so a burst of load from
  another process lands on all of them, torch included.
  """
  for single, batched in paths.values():  # warm-up: tracing, XLA compilation, caches
    single(3)
    batched(1)
  times = {name: {"latency": [], "latency_cpu": [], "throughput": [], "throughput_cpu": []}
           for name in paths}
  share = lambda total, r: total // rounds + (1 if r < total % rounds else 0)
  for r in range(rounds):
    for name, (single, batched) in paths.items():
      for timer, runs, key in ((single, share(latency_runs, r), "latency"),
                               (batched, share(throughput_runs, r), "throughput")):
        wall, cpu = timer(runs)
        times[name][key] += wall
        times[name][key + "_cpu"] += cpu
  return times


def summarize(times: dict, batch: int) -> dict:
  return {"p50_ms": 1000 * float(np.percentile(times["latency"], 50)),
          "p99_ms": 1000 * float(np.percentile(times["latency"], 99)),
          "seq_per_s": batch / float(np.median(times["throughput"])),
          "cpu_ms_b1": 1000 * float(np.median(times["latency_cpu"])),
          "cpu_ms_batch": 1000 * float(np.median(times["throughput_cpu"]))}


def bench_shape(shape: str, tokenizer, texts: list[str], work_dir: str,
                variants: list[str]) -> dict:
  import keras
  import tensorflow as tf

  from bert_keras.export.export_task_model import export_task_model
  from bert_keras.export.serving_options import ServingOptions
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.text.bert_packer import BertPacker
  from bert_keras.configs.model import get_model_config

  latency_runs, throughput_runs = runs_for(shape)
  config = get_model_config(shape, vocab_size=tokenizer.vocab_size)
  keras.utils.set_random_seed(0)
  encoder = BertEncoder.from_model_config(config)
  one, batch = tf.constant(texts[:1]), tf.constant(texts[:FLAGS.batch_size])
  packer = BertPacker(FLAGS.seq_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
  tokenize = tf.function(lambda t: packer([tf.cast(tokenizer.tokenize(t), tf.int32)]),
                         input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
  packed_one, packed_batch = tokenize(one), tokenize(batch)
  assert int(tf.reduce_min(tf.reduce_sum(packed_batch["input_mask"], 1))) == FLAGS.seq_length

  # Every output is fetched to host memory as numpy, as a server answering a request would.
  # np.asarray views the tensor's buffer, as torch's Tensor.numpy() does; EagerTensor.numpy()
  # would add a copy (4.5 CPU ms per batch-32 call of the encoder export) that torch never makes.
  fetch = lambda outputs: [np.asarray(value) for value in outputs.values()]
  paths, export_seconds = {}, {}
  for variant in variants:
    kind, _, groups = variant.partition(":g")
    jit = {"graph": False, "xla": True, "auto": "auto"}.get(kind)
    if jit is None or (groups and not groups.isdigit()):
      raise ValueError(f"--variants: {variant!r}; expected graph, xla or auto, optionally :gN")
    path = os.path.join(work_dir, f"{shape}_{variant.replace(':', '_')}")
    start = time.time()
    export_task_model(encoder, "encoder", tokenizer, path, FLAGS.seq_length,
                      options=ServingOptions(jit_compile=jit,
                                             head_groups=int(groups) if groups else None))
    export_seconds[variant] = time.time() - start
    loaded = tf.saved_model.load(path)
    ids_in = loaded.signatures["serving_tokenized"]
    text_in = loaded.signatures["serving_default"]
    paths[f"text-in SavedModel ({variant})"] = (
        timed_locally(lambda f=text_in: fetch(f(text_a=one))),
        timed_locally(lambda f=text_in: fetch(f(text_a=batch))))
    paths[f"ids-in SavedModel ({variant})"] = (
        timed_locally(lambda f=ids_in: fetch(f(**packed_one))),
        timed_locally(lambda f=ids_in: fetch(f(**packed_batch))))
    # Same outputs from text and from ids: the tokenization inside is the one timed outside.
    np.testing.assert_allclose(text_in(text_a=batch)["pooled_output"].numpy(),
                               ids_in(**packed_batch)["pooled_output"].numpy(), atol=1e-4)
    np.testing.assert_allclose(loaded.serve(batch)["pooled_output"].numpy(),
                               ids_in(**packed_batch)["pooled_output"].numpy(), atol=1e-4)
  paths["tokenize outside"] = (timed_locally(lambda: fetch(tokenize(one))),
                               timed_locally(lambda: fetch(tokenize(batch))))
  server = start_torch(shape, tokenizer.vocab_size) if FLAGS.torch else None
  try:
    if server:
      intra, inter = server.info["threads"]
      paths[f"torch {server.info['torch']} BertModel (model only) [torch {intra}/{inter}]"] = (
          server.timer("latency"), server.timer("throughput"))
    times = interleaved(paths, latency_runs, throughput_runs, FLAGS.rounds)
  finally:
    if server:
      server.close()
  rows = {name: summarize(t, FLAGS.batch_size) for name, t in times.items()}
  return {"rows": rows, "export_seconds": export_seconds, "latency_runs": latency_runs,
          "throughput_runs": throughput_runs}


def runs_for(shape: str) -> tuple[int, int]:
  small = shape != "bert_base" and shape != "bert_large"
  return (FLAGS.latency_runs or (100 if small else 30),
          FLAGS.throughput_runs or (10 if small else 5))


def start_torch(shape: str, vocab_size: int) -> TorchServer:
  """Hugging Face BertModel of the same shape, served from the torch venv for `interleaved`."""
  from bert_keras.configs.model import get_model_config
  config = get_model_config(shape, vocab_size=vocab_size)
  spec = dict(vocab_size=config.vocab_size, hidden_size=config.hidden_size,
              num_layers=config.num_layers, num_heads=config.num_heads,
              intermediate_size=config.intermediate_size, seq_length=FLAGS.seq_length,
              batch_size=FLAGS.batch_size)
  return TorchServer(ensure_torch_venv(FLAGS.torch_venv), _TORCH_SCRIPT, spec)


def threads_label(setting: str) -> str:
  return "TF default" if setting == "default" else f"TF {setting}"


def child(setting: str, variants: list[str]) -> None:
  """Times the TF paths under one thread setting (set before TF starts); writes JSON."""
  from absl import logging
  logging.set_verbosity(logging.WARNING)
  import tensorflow as tf
  if setting != "default":
    intra, inter = (int(n) for n in setting.split("/"))
    tf.config.threading.set_intra_op_parallelism_threads(intra)
    tf.config.threading.set_inter_op_parallelism_threads(inter)
  from bert_keras import resources
  from bert_keras.text.bert_tokenizer import BertTokenizer

  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  texts = lee_texts(FLAGS.batch_size)
  results = {"vocab_size": tokenizer.vocab_size, "shapes": {}, "threads": {
      "intra": tf.config.threading.get_intra_op_parallelism_threads(),
      "inter": tf.config.threading.get_inter_op_parallelism_threads(), "cpus": os.cpu_count()}}
  with tempfile.TemporaryDirectory() as work_dir:
    for shape in FLAGS.models:
      results["shapes"][shape] = bench_shape(shape, tokenizer, texts, work_dir, variants)
  tmp = FLAGS.child_output + ".tmp"
  with open(tmp, "w") as f:
    json.dump(results, f)
  os.replace(tmp, FLAGS.child_output)


def run_child(setting: str, variants: list[str], work_dir: str, with_torch: bool) -> dict:
  output = os.path.join(work_dir, f"threads_{setting.replace('/', '_')}.json")
  argv = [sys.executable, os.path.abspath(__file__), f"--tf_threads={setting}",
          f"--child_output={output}", f"--variants={','.join(variants)}",
          f"--models={','.join(FLAGS.models)}", f"--seq_length={FLAGS.seq_length}",
          f"--batch_size={FLAGS.batch_size}", f"--latency_runs={FLAGS.latency_runs}",
          f"--throughput_runs={FLAGS.throughput_runs}", f"--rounds={FLAGS.rounds}",
          f"--torch={FLAGS.torch and with_torch}", f"--torch_venv={FLAGS.torch_venv}"]
  subprocess.run(argv, check=True)
  with open(output) as f:
    return json.load(f)


def main(argv):
  del argv
  if FLAGS.child_output:
    return child(FLAGS.tf_threads[0], FLAGS.variants)
  load_before = f"{os.getloadavg()[0]:.1f}"
  results, used = {}, {}
  with tempfile.TemporaryDirectory() as work_dir:
    for i, setting in enumerate(FLAGS.tf_threads):
      variants = FLAGS.variants if i == 0 else FLAGS.variants[:1]
      child_results = run_child(setting, variants, work_dir, with_torch=i == 0)
      threads = child_results["threads"]
      used[setting] = threads
      for shape, result in child_results["shapes"].items():
        merged = results.setdefault(shape, {"rows": {}, "export_seconds": {},
                                            "latency_runs": result["latency_runs"],
                                            "throughput_runs": result["throughput_runs"]})
        suffix = "" if i == 0 else f" [{threads_label(setting)}]"
        merged["rows"].update({name + suffix: row for name, row in result["rows"].items()})
        merged["export_seconds"].update(
            {v + suffix: t for v, t in result["export_seconds"].items()})
  described = "; ".join(
      f"{threads_label(s)}: intra/inter-op {t['intra'] or 'auto'}/{t['inter'] or 'auto'}"
      + (f" (0 = TF picks, here {t['cpus']} CPUs)" if not (t["intra"] or t["inter"]) else "")
      for s, t in used.items())
  print(f"\nseq_length={FLAGS.seq_length}, batch={FLAGS.batch_size}; headline rows: "
        f"{threads_label(FLAGS.tf_threads[0])}; {described}; load average {load_before} "
        f"before, {os.getloadavg()[0]:.1f} after")
  width = max(len(name) for result in results.values() for name in result["rows"]) + 1
  header = (f"{'shape':10} {'path':{width}} {'p50 ms':>8} {'p99 ms':>8} {'seq/s':>8} "
            f"{'CPU ms b1':>10} {'CPU ms b' + str(FLAGS.batch_size):>10}")
  print(header)
  print("-" * len(header))
  for shape, result in results.items():
    rows = result["rows"]
    for name, row in rows.items():
      print(f"{shape:10} {name:{width}} {row['p50_ms']:8.2f} {row['p99_ms']:8.2f} "
            f"{row['seq_per_s']:8.2f} {row['cpu_ms_b1']:10.2f} {row['cpu_ms_batch']:10.1f}")
    torch_row = next((row for name, row in rows.items() if name.startswith("torch")), None)
    for variant in FLAGS.variants:
      text, ids = rows[f"text-in SavedModel ({variant})"], rows[f"ids-in SavedModel ({variant})"]
      batch_ms = lambda row: 1000 * FLAGS.batch_size / row["seq_per_s"]
      line = (f"{shape:10} {variant}: in-graph tokenization cost (text-in - ids-in) "
              f"{text['p50_ms'] - ids['p50_ms']:.2f} ms p50 at batch 1 "
              f"({text['cpu_ms_b1'] - ids['cpu_ms_b1']:.2f} CPU ms), "
              f"{batch_ms(text) - batch_ms(ids):.1f} ms at batch {FLAGS.batch_size} "
              f"({text['cpu_ms_batch'] - ids['cpu_ms_batch']:.1f} CPU ms)")
      if torch_row:
        line += (f"; text-in vs torch: p50 x{text['p50_ms'] / torch_row['p50_ms']:.2f}, "
                 f"seq/s x{text['seq_per_s'] / torch_row['seq_per_s']:.2f}")
      print(line)
    print(f"{shape:10} {result['latency_runs']} / {result['throughput_runs']} timed runs in "
          f"{FLAGS.rounds} rounds; export " + ", ".join(
              f"{v} {t:.0f} s" for v, t in result["export_seconds"].items()))
  if FLAGS.output_file:
    with open(FLAGS.output_file, "w") as f:
      json.dump({"threads": used, "shapes": results}, f, indent=2)


if __name__ == "__main__":
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  app.run(main)
