"""Every constant tuned on one host, with the measurement that set it.

All were measured on a 2-core x86 CPU (TensorFlow's default oneDNN build); none was measured on a
GPU or TPU, which take the reference implementation by default (bert_keras/kernels/__init__.py).
Re-measure on a new host with bench/bench_serving.py and bench/bench_pretraining.py.
"""

# Row groups of every Transformer block in the exported (non-XLA) graph
# (cpu_transformer_block.py). 2: on a quiet 2-core machine (bench/bench_serving.py, TF default
# threading) the split cut batch-1 p50 from 19.4 to 14.5 ms at BERT-mini and from 197.9 to
# 174.7 ms at BERT-Base, with batch-32 throughput equal or better; outputs are unchanged.
DEFAULT_ROW_GROUPS = 2

# Split exports (row_groups > 1) run calls of at most this many packed positions (rows x bucket)
# with contraction groups instead (cpu_transformer_block.py): a few rows per projection are bound
# by streaming its kernel, which contraction groups split between the cores. MiniLM's shapes at
# threads 1/2, one row, model only, same-process A/B: 16 / 24 / 32 / 48 / 64 / 128 positions at
# 0.82 / 0.85 / 0.89 / 0.92 / 0.97 / 1.08x the row groups' time; 32 rows of 32 at 1.17x.
CONTRACTION_GROUPS_MAX_POSITIONS = 48

# From this hidden size on, exports without an explicit row_groups are unsplit: a BERT-Base matmul
# is large enough for oneDNN to spread it over both cores by itself, and the split only adds ops
# (concats, twice the projections' calls). In later interleaved runs of the same benchmark Base's
# batch-1 p50 was lower unsplit (180.1 vs 191.7 ms; and again in the next run), and it takes 5-10%
# fewer CPU-ms per batch-1 call (292 vs 309 in a same-process A/B, 378 vs 405-420 in the
# benchmark); batch-32 throughput within 3%. On a busy machine the split can still win on wall
# time (it uses whatever core frees up first), so confirm on a quiet one.
# BERT-mini keeps the split (batch-1 p50 12.75 vs 18.06 ms unsplit).
UNSPLIT_MIN_HIDDEN = 768

# From this hidden size on, inference LayerNorms take grappler's fused oneDNN kernel
# (fused_layer_norm.py): per LayerNorm at hidden 768 it is even at 128 rows and 2-3.7x faster at
# 1024-4096 rows; at hidden 256 it is 1.3x slower at 128 rows. In the whole encoder
# (row_groups=2, same-process A/B, CPU-ms per call): BERT-Base batch 32 -6% with batch 1
# unchanged; BERT-mini batch 32 -7% but batch 1 +23%.
FUSED_LAYER_NORM_MIN_HIDDEN = 768

# jit_compile="auto" exports: calls on at most this many packed rows run the XLA-compiled model.
# On 2 CPU cores XLA took about 12% less CPU time per call than the TF graph executor on one
# sequence (BERT-mini, length 128) but about 17% more at 32 rows (export/serving_module.py).
AUTO_XLA_MAX_ROWS = 1


def default_row_groups(hidden_size: int | None) -> int:
  """Row groups of an export that does not name them: DEFAULT_ROW_GROUPS below
  UNSPLIT_MIN_HIDDEN, else 1 (None: a model without Transformer blocks, nothing to split)."""
  if hidden_size is not None and hidden_size >= UNSPLIT_MIN_HIDDEN:
    return 1
  return DEFAULT_ROW_GROUPS
