"""Every constant tuned on one host, with the measurement that set it.

All were measured on a 2-core x86 CPU (TensorFlow's default oneDNN build); none was measured on a
GPU or TPU, which take the reference implementation by default (bert_keras/kernels/__init__.py).
Re-measure on a new host with bench/bench_serving.py and bench/bench_pretraining.py.
"""

# Head groups of every Transformer block in the exported (non-XLA) graph
# (cpu_transformer_block.py). 2: each core runs half the heads and half the feed-forward width.
# Against the row groups that exports used before (and the contraction groups they used for calls
# of at most 48 positions), MiniLM's shapes at threads 1/2, model only, same process: batch 1 at
# 16 / 32 / 64 / 128 positions 0.72 / 0.77 / 0.83 / 0.95x the row groups' time and 0.86-0.88x the
# contraction groups'; 32 rows of 32 / 64 positions 0.98 / 0.95x. Served text-in (polarity
# sentences one per call, same-process A/B): p50 8.55 -> 7.25 ms at threads 1/2, 10.12 -> 9.37 ms
# at TF's default; batch-32 mixed lengths 2-4% more seq/s. Outputs are unchanged.
DEFAULT_HEAD_GROUPS = 2

# From this hidden size on, exports without an explicit head_groups are unsplit: there the copies
# of the q-k-v and widening kernels weigh most (BERT-Base's export 429 -> 619 MB), while at TF's
# default threads a Base matmul is large enough for oneDNN to use both cores by itself. Served
# A/B, random-weight BERT-Base, the polarity sentences one per call: split 43.4 vs unsplit 46.5 ms
# p50 at TF's default threads, batches of 32 equal; at threads 1/2 41.4 vs 71.5 ms (unsplit, one
# core idles), so a server run at 1/2 should export Base with head_groups=2. (Row groups, the
# split before, lost at Base on the default threads: 191.7 vs 180.1 ms p50.)
UNSPLIT_MIN_HIDDEN = 768

# From this hidden size on, inference LayerNorms take grappler's fused oneDNN kernel
# (fused_layer_norm.py): per LayerNorm at hidden 768 it is even at 128 rows and 2-3.7x faster at
# 1024-4096 rows; at hidden 256 it is 1.3x slower at 128 rows. In the whole encoder
# (head_groups=2, same-process A/B, CPU-ms per call): BERT-Base batch 32 -6% with batch 1
# unchanged; BERT-mini batch 32 -7% but batch 1 +23%.
FUSED_LAYER_NORM_MIN_HIDDEN = 768

# jit_compile="auto" exports: calls on at most this many packed rows run the XLA-compiled model.
# On 2 CPU cores XLA took about 12% less CPU time per call than the TF graph executor on one
# sequence (BERT-mini, length 128) but about 17% more at 32 rows (export/serving_module.py).
AUTO_XLA_MAX_ROWS = 1


def default_head_groups(hidden_size: int | None) -> int:
  """Head groups of an export that does not name them: DEFAULT_HEAD_GROUPS below
  UNSPLIT_MIN_HIDDEN, else 1 (None: a model without Transformer blocks, nothing to split)."""
  if hidden_size is not None and hidden_size >= UNSPLIT_MIN_HIDDEN:
    return 1
  return DEFAULT_HEAD_GROUPS
