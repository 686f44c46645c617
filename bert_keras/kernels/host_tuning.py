"""Every constant tuned on one host (2-core x86 CPU, oneDNN), with the measurement that set it.
Re-measure on a new host with bench/bench_serving.py and bench/bench_pretraining.py.
"""

# Head groups of every block in the exported graph (cpu_transformer_block.py): each core runs half
# the heads. Served MiniLM text-in, one sentence per call: p50 8.55 -> 7.25 ms at threads 1/2.
DEFAULT_HEAD_GROUPS = 2

# From this hidden size on, exports are unsplit by default: the copies weigh most (BERT-Base's
# export 429 -> 619 MB) and a Base matmul uses both cores itself (served p50 split 43.4 vs unsplit
# 46.5 ms at TF's default threads; at threads 1/2 41.4 vs 71.5 ms: there pass head_groups=2).
UNSPLIT_MIN_HIDDEN = 768

# From this hidden size on, inference LayerNorms take the fused oneDNN kernel (fused_layer_norm.py):
# BERT-Base batch 32 -6% CPU per call, batch 1 unchanged; BERT-mini batch 1 would be +23%.
FUSED_LAYER_NORM_MIN_HIDDEN = 768

# jit_compile="auto" exports: calls of at most this many rows run the XLA model (BERT-mini: 12% less
# CPU than the graph executor at one row, 17% more at 32).
AUTO_XLA_MAX_ROWS = 1


def default_head_groups(hidden_size: int | None) -> int:
  return 1 if hidden_size is not None and hidden_size >= UNSPLIT_MIN_HIDDEN else DEFAULT_HEAD_GROUPS
