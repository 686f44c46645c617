"""Serving speed of the text-in SavedModel, tokenization included, beside model-only peers.

For BERT-mini and BERT-Base shapes at sequence length 128, with 2 threads, in one run:
  text-in SavedModel      raw strings -> outputs: in-graph tokenizer + packer + encoder
  tokenize outside        the same tokenizer + packer alone (what a server that tokenizes
                          elsewhere pays before calling the model)
  model-only SavedModel   the same SavedModel's `serving_tokenized` signature on packed ids
  torch BertModel         Hugging Face transformers on torch CPU, model only (packed ids), run in
                          its own virtualenv bench/.venvs/torch (created here when missing:
                          pip install torch==2.13.0 transformers; 2.13.0 is the CPU build)
Latency: batch 1, p50 and p99 over --latency_runs calls. Throughput: batch 32, sequences/s over
--throughput_runs calls. Inputs: real news documents (Lee corpus) long enough to fill 128 pieces.
Weights are random (speed does not depend on them); the encoder export is the feature-extraction
one (pooled, sequence and all layers' outputs).

  python bench/bench_serving.py                       # both shapes, ~10 min on 2 cores
  python bench/bench_serving.py --shapes=bert_mini --latency_runs=50
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

FLAGS = flags.FLAGS
flags.DEFINE_list("shapes", ["bert_mini", "bert_base"], "Model presets (configs/model.py).")
flags.DEFINE_integer("seq_length", 128, "Packed sequence length.")
flags.DEFINE_integer("threads", 2, "Intra-op threads for TF and torch (inter-op: 1).")
flags.DEFINE_integer("batch_size", 32, "Throughput batch size.")
flags.DEFINE_integer("latency_runs", 0, "Batch-1 calls timed (0 = 100 for small, 30 for base).")
flags.DEFINE_integer("throughput_runs", 0, "Batch calls timed (0 = 10 for small, 3 for base).")
flags.DEFINE_bool("jit_compile", True, "XLA-compile the Transformer inside the SavedModel.")
flags.DEFINE_bool("torch", True, "Also measure Hugging Face BertModel on torch CPU.")
flags.DEFINE_string("torch_venv", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               ".venvs", "torch"), "Virtualenv for torch.")
flags.DEFINE_string("output_json", "", "Also write the results here.")

_TORCH_SCRIPT = r"""
import json, sys, time
import numpy as np
import torch
from transformers import BertConfig, BertModel

spec = json.loads(sys.argv[1])
torch.set_num_threads(spec["threads"])
torch.set_num_interop_threads(1)
torch.manual_seed(0)
config = BertConfig(vocab_size=spec["vocab_size"], hidden_size=spec["hidden_size"],
                    num_hidden_layers=spec["num_layers"], num_attention_heads=spec["num_heads"],
                    intermediate_size=spec["intermediate_size"], hidden_act="gelu",
                    max_position_embeddings=512, type_vocab_size=2)
model = BertModel(config).eval()
rng = np.random.default_rng(0)

def inputs(batch):
  ids = torch.tensor(rng.integers(1000, spec["vocab_size"], (batch, spec["seq_length"])))
  return dict(input_ids=ids, attention_mask=torch.ones_like(ids),
              token_type_ids=torch.zeros_like(ids))

def timed(batch, runs, warmup):
  x = inputs(batch)
  times = []
  with torch.inference_mode():
    for i in range(warmup + runs):
      start = time.perf_counter()
      model(**x)
      if i >= warmup:
        times.append(time.perf_counter() - start)
  return times

print(json.dumps({"torch": torch.__version__,
                  "latency": timed(1, spec["latency_runs"], 3),
                  "throughput": timed(spec["batch_size"], spec["throughput_runs"], 1)}))
"""


def ensure_torch_venv(path: str) -> str:
  """The venv's python, creating it with the CPU torch 2.13.0 + transformers when missing."""
  python = os.path.join(path, "bin", "python")
  check = [python, "-c", "import torch, transformers"]
  if os.path.exists(python) and subprocess.run(check, capture_output=True).returncode == 0:
    return python
  subprocess.run([sys.executable, "-m", "venv", path], check=True)
  # Plain `torch` would pull a multi-GB CUDA build; 2.13.0 resolves to the CPU one here.
  subprocess.run([python, "-m", "pip", "install", "-q", "torch==2.13.0", "transformers"],
                 check=True)
  return python


def lee_texts(count: int) -> list[str]:
  from bert_keras import resources
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    docs = [line.strip() for line in f if len(line.split()) > 150]
  return docs[:count]


def timed(fn, runs: int, warmup: int = 3) -> list[float]:
  for _ in range(warmup):
    fn()
  times = []
  for _ in range(runs):
    start = time.perf_counter()
    fn()
    times.append(time.perf_counter() - start)
  return times


def summarize(latency: list[float], throughput: list[float], batch: int) -> dict:
  return {"p50_ms": 1000 * float(np.percentile(latency, 50)),
          "p99_ms": 1000 * float(np.percentile(latency, 99)),
          "seq_per_s": batch / float(np.median(throughput))}


def bench_shape(shape: str, tokenizer, texts: list[str], work_dir: str) -> dict:
  import keras
  import tensorflow as tf

  from bert_keras.export.export_task_model import export_task_model
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.text.bert_packer import BertPacker
  from configs.model import get_model_config

  small = shape != "bert_base" and shape != "bert_large"
  latency_runs = FLAGS.latency_runs or (100 if small else 30)
  throughput_runs = FLAGS.throughput_runs or (10 if small else 3)
  config = get_model_config(shape, vocab_size=tokenizer.vocab_size)
  keras.utils.set_random_seed(0)
  encoder = BertEncoder.from_model_config(config)
  path = os.path.join(work_dir, shape)
  start = time.time()
  export_task_model(encoder, "encoder", tokenizer, path, FLAGS.seq_length,
                    jit_compile=FLAGS.jit_compile)
  export_seconds = time.time() - start
  loaded = tf.saved_model.load(path)

  one, batch = tf.constant(texts[:1]), tf.constant(texts[:FLAGS.batch_size])
  packer = BertPacker(FLAGS.seq_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
  tokenize = tf.function(lambda t: packer([tf.cast(tokenizer.tokenize(t), tf.int32)]),
                         input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
  packed_one, packed_batch = tokenize(one), tokenize(batch)
  assert int(tf.reduce_min(tf.reduce_sum(packed_batch["input_mask"], 1))) == FLAGS.seq_length
  model_only = loaded.signatures["serving_tokenized"]

  rows = {}
  measures = {"text-in SavedModel": (lambda: loaded.serve(one), lambda: loaded.serve(batch)),
              "tokenize outside": (lambda: tokenize(one), lambda: tokenize(batch)),
              "model-only SavedModel": (lambda: model_only(**packed_one),
                                        lambda: model_only(**packed_batch))}
  for name, (single, many) in measures.items():
    rows[name] = summarize(timed(single, latency_runs), timed(many, throughput_runs, 1),
                           FLAGS.batch_size)
  # tokenize outside + model only, as a server that splits them would pay (sum of medians).
  split = {"p50_ms": rows["tokenize outside"]["p50_ms"] + rows["model-only SavedModel"]["p50_ms"],
           "p99_ms": rows["tokenize outside"]["p99_ms"] + rows["model-only SavedModel"]["p99_ms"],
           "seq_per_s": 1 / (1 / rows["tokenize outside"]["seq_per_s"]
                             + 1 / rows["model-only SavedModel"]["seq_per_s"])}
  rows["tokenize outside + model-only"] = split

  if FLAGS.torch:
    python = ensure_torch_venv(FLAGS.torch_venv)
    spec = dict(vocab_size=config.vocab_size, hidden_size=config.hidden_size,
                num_layers=config.num_layers, num_heads=config.num_heads,
                intermediate_size=config.intermediate_size, seq_length=FLAGS.seq_length,
                threads=FLAGS.threads, batch_size=FLAGS.batch_size, latency_runs=latency_runs,
                throughput_runs=throughput_runs)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS=str(FLAGS.threads), MKL_NUM_THREADS=str(FLAGS.threads))
    run = subprocess.run([python, "-c", _TORCH_SCRIPT, json.dumps(spec)], capture_output=True,
                         text=True, env=env, check=True)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    rows[f"torch {result['torch']} BertModel (model only)"] = summarize(
        result["latency"], result["throughput"], FLAGS.batch_size)
  return {"rows": rows, "export_seconds": export_seconds, "latency_runs": latency_runs,
          "throughput_runs": throughput_runs}


def main(argv):
  del argv
  from absl import logging
  logging.set_verbosity(logging.WARNING)
  import tensorflow as tf
  tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)
  tf.config.threading.set_inter_op_parallelism_threads(1)
  from bert_keras import resources
  from bert_keras.text.bert_tokenizer import BertTokenizer

  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  texts = lee_texts(FLAGS.batch_size)
  results = {}
  with tempfile.TemporaryDirectory() as work_dir:
    for shape in FLAGS.shapes:
      results[shape] = bench_shape(shape, tokenizer, texts, work_dir)
  print(f"\nseq_length={FLAGS.seq_length}, threads={FLAGS.threads}, batch={FLAGS.batch_size}, "
        f"jit_compile={FLAGS.jit_compile}, load average {os.getloadavg()[0]:.1f}")
  header = f"{'shape':10} {'path':44} {'p50 ms':>9} {'p99 ms':>9} {'seq/s':>9}"
  print(header)
  print("-" * len(header))
  for shape, result in results.items():
    for name, row in result["rows"].items():
      print(f"{shape:10} {name:44} {row['p50_ms']:9.2f} {row['p99_ms']:9.2f} "
            f"{row['seq_per_s']:9.2f}")
    rows = result["rows"]
    cost = rows["text-in SavedModel"]["p50_ms"] - rows["model-only SavedModel"]["p50_ms"]
    print(f"{shape:10} in-graph tokenization cost at batch 1: {cost:.2f} ms p50 "
          f"({result['latency_runs']} / {result['throughput_runs']} timed runs; export "
          f"{result['export_seconds']:.0f} s)")
  if FLAGS.output_json:
    with open(FLAGS.output_json, "w") as f:
      json.dump(results, f, indent=2)


if __name__ == "__main__":
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  app.run(main)
