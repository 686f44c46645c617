"""How the fast paths are built: the graph and call figures a kernel or serving change should keep.

The tests (tests/) check what a user sees: outputs equal to the reference, files, errors. These
checks are the implementation's side of the same work, the figures that make the fast paths fast:
which ops grappler fuses, which functions XLA compiles, how many rows the last block computes, how
often a step is traced or a file listed. A harmless refactor may change them; a change that loses
one of them should be a decision, taken with a benchmark (docs/benchmarks.md), not an accident.

What a kernel change should keep:
  cpu_block_fusions[g]          the CPU block's inference graph after grappler (oneDNN): per head
                                group one MatMul+BiasAdd+GELU, the q-k-v MatMul+BiasAdd, no Erf, one
                                Softmax per group, LayerNorm in 2 reductions
  fused_gelu_xla[name]          the GELUs are one XLA function; relu and the reference are not
  fused_gelu_saved[name]        the GELU's forward keeps only x for its gradient (3 outputs)
  layer_norm_form               inference LayerNorm takes FusedBatchNormV3 from
                                FUSED_LAYER_NORM_MIN_HIDDEN on, not below, not in mixed float16
  saved_model_fusions           a loaded wide block's runtime graph: 4 fused matmuls, 2 _MklLayerNorm
  head_groups_ops               2 groups: 2 Splits, 2 Softmaxes, each group its own projections;
                                training unsplit; 4 untrainable kernel/bias copies per group
  last_block_rows[model]        the last block's feed-forward runs only on the rows the heads read
  bit_dropout_kernels           dropout is one XLA kernel forward and one backward, no mask kept
  bit_dropout_bits              the XLA kernel and the same arithmetic in TF ops draw the same bits
  bit_dropout_unknown_shape     an unknown shape takes Keras' dropout (no hash ops)
  wide_dense_copies             the transposed kernel copy: once per wide_dense, only for the CPU
                                block's intermediate projection in a traced training step
Serving:
  auto_jit_switch               jit_compile="auto": an XLA function, If nodes not lowered to
                                Switch/Merge, one row runs the XLA model, a batch the plain graph
  export_head_groups            head groups split the exported graph (not the reference
                                implementation, not the XLA model, not wide models by default)
  length_buckets_traced_once    every text signature calls the one traced bucket function
Text:
  tokenizer_conds               the tokenizer's conds stay If nodes (only the branch taken runs)
  packer_dense                  single and pair packing have no RoundRobinTrimmer ops
  wordpiece_cache_bound         the data pipelines' WordPiece caches hold at most MAX_CACHE_ENTRIES
Data:
  corpus_ingestion_runs         a shard larger than a run is merged from runs of at most
                                run_bytes + one document (memory stays bounded)
Training:
  adamw_step_scalars            FusedAdamW's bias corrections once per dtype, not per variable
  sum_over_steps_traced_once    the training loop traces its step once
  pretraining_file_calls[run]   run_pretraining's inputs: one glob per pattern, one summary.json
                                read, one stat and one first-record read per file; no more after
  init_checkpoint_detected_once fine-tuning detects --init_checkpoint's format once

Each check prints its name, PASS or FAIL (or SKIP) and its figure; the exit status is 1 when one
fails. Not part of `make test`.

  PYTHONPATH=. python bench/check_graphs.py [--only=SUBSTRING]
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import tempfile
import traceback

_CHECKS = []


def check(fn):
  """Registers a check: it returns (ok, figure) or a list of (name suffix, ok, figure)."""
  _CHECKS.append(fn)
  return fn


@contextlib.contextmanager
def patched(owner, name, value):
  original = getattr(owner, name)
  setattr(owner, name, value)
  try:
    yield
  finally:
    setattr(owner, name, original)


def _op_types(fn, *args):
  return [op.type for op in fn.get_concrete_function(*args).graph.get_operations()]


def _mkl_enabled():
  from tensorflow.python.util import _pywrap_util_port
  return _pywrap_util_port.IsMklEnabled()


def _fused_op_names(nodes):
  """Counter of op types with their fused_ops ("_FusedMatMul+BiasAdd+GeluExact")."""
  return collections.Counter(
      node.op + "".join(f"+{op.decode()}" for op in node.attr["fused_ops"].list.s)
      for node in nodes)


def _xla_calls(graph):
  return [op for op in graph.get_operations()
          if op.type in ("PartitionedCall", "StatefulPartitionedCall")
          and op.node_def.attr["_XlaMustCompile"].b]


def _saved_library(path):
  from tensorflow.core.protobuf import saved_model_pb2
  proto = saved_model_pb2.SavedModel()
  with open(os.path.join(path, "saved_model.pb"), "rb") as f:
    proto.ParseFromString(f.read())
  return proto.meta_graphs[0].graph_def.library


# === Kernels ===

def _cpu_block(head_groups=1, hidden=32, heads=4, width=64, **kwargs):
  import keras
  from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
  from bert_keras.models.transformer_block import TransformerBlock
  keras.utils.set_random_seed(0)
  block = TransformerBlock(num_heads=heads, intermediate_size=width, **kwargs)
  block.build((None, None, hidden))
  return CpuTransformerBlock(block, head_groups)


def _block_specs(hidden=32):
  import tensorflow as tf
  return [tf.TensorSpec([None, None, hidden]), tf.TensorSpec([None, None, None])]


def _block_inputs(batch, seq, hidden=32, seed=0):
  import numpy as np
  import tensorflow as tf
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(batch, seq, hidden)).astype("float32")
  lengths = rng.integers(1, seq + 1, size=batch)
  mask = (np.arange(seq)[None, None, :] < lengths[:, None, None]).astype("float32")
  return tf.constant(x), tf.constant(np.broadcast_to(mask, (batch, seq, seq)).copy())


@check
def cpu_block_fusions():
  import tensorflow as tf
  from tensorflow.core.protobuf import config_pb2
  from tensorflow.python.framework import meta_graph
  from tensorflow.python.grappler import tf_optimizer
  if not _mkl_enabled():
    return None, "the GELU fusion is oneDNN's (TF_ENABLE_ONEDNN_OPTS=0 or a non-x86 build)"
  results = []
  for groups in (1, 2):
    block = _cpu_block(head_groups=groups)
    fn = tf.function(lambda x, m, b=block: b(x, m, training=False), autograph=False)
    concrete = fn.get_concrete_function(*_block_specs())
    graph = meta_graph.create_meta_graph_def(graph=concrete.graph)
    for node in graph.graph_def.node:
      node.device = "/job:localhost/replica:0/task:0/device:CPU:0"  # the remapper fuses on CPU
    graph.collection_def["train_op"].node_list.value.extend(t.op.name for t in concrete.outputs)
    ops = _fused_op_names(tf_optimizer.OptimizeGraph(config_pb2.ConfigProto(), graph).node)
    # Per group its q-k-v as MatMul+BiasAdd and its share of the widening +GELU. Unsplit, the
    # output projections are MatMul+BiasAdd too; split, each group's partial output products are
    # plain MatMuls summed before one BiasAdd.
    ok = (ops["_FusedMatMul+BiasAdd+GeluExact"] == groups
          and ops["_FusedMatMul+BiasAdd"] == (3 if groups == 1 else groups)
          and ops["MatMul"] == (0 if groups == 1 else 2 * groups)
          and not {"Erf", "Erfc", "Neg", "SquaredDifference"} & set(ops)
          and ops["Softmax"] == groups and ops["Split"] == (0 if groups == 1 else 2)
          and ops["Mean"] == 4)
    figure = {k: ops[k] for k in ("_FusedMatMul+BiasAdd+GeluExact", "_FusedMatMul+BiasAdd",
                                  "MatMul", "Softmax", "Split", "Mean", "Erf")}
    results.append((f"[{groups}]", ok, figure))
  return results


@check
def fused_gelu_xla():
  import tensorflow as tf
  from bert_keras.kernels.fused_gelu import fused_activation
  from bert_keras.models.activations import get_activation
  spec = tf.TensorSpec((None, 4), tf.float32)
  results = []
  for name, compiled in (("gelu", True), ("gelu_tanh", True), ("relu", False)):
    fused = len(_xla_calls(tf.function(fused_activation(name)).get_concrete_function(spec).graph))
    plain = len(_xla_calls(tf.function(get_activation(name)).get_concrete_function(spec).graph))
    results.append((f"[{name}]", bool(fused) == compiled and plain == 0,
                    f"XLA functions: fused {fused}, reference {plain}"))
  return results


@check
def fused_gelu_saved():
  """The gradient recomputes tanh / the CDF from x: the forward function outputs y and x (twice:
  the argument and custom_gradient's IdentityN); the backward reads the two x only."""
  import tensorflow as tf
  from bert_keras.kernels.fused_gelu import fused_activation
  results = []
  for name in ("gelu", "gelu_tanh"):
    act = fused_activation(name)

    @tf.function
    def run(x, act=act):
      with tf.GradientTape() as tape:
        tape.watch(x)
        y = act(x)
      return tape.gradient(y, x)

    graph = run.get_concrete_function(tf.TensorSpec((None, 4), tf.float32)).graph
    forward, backward = [op for op in graph.get_operations()
                         if op.type == "PartitionedCall" and op.node_def.attr["_XlaMustCompile"].b]
    outputs, read = len(forward.outputs), sum(i.op is forward for i in backward.inputs)
    results.append((f"[{name}]", outputs == 3 and read == 2,
                    f"forward outputs {outputs} (was 6), backward reads {read}"))
  return results


def _norm(hidden, dtype=None):
  import keras
  import numpy as np
  norm = keras.layers.LayerNormalization(epsilon=1e-12, dtype=dtype)
  norm.build((None, hidden))
  rng = np.random.default_rng(3)
  norm.gamma.assign(rng.normal(1.0, 0.3, hidden))
  norm.beta.assign(rng.normal(0.0, 0.3, hidden))
  return norm


@check
def layer_norm_form():
  import tensorflow as tf
  from bert_keras.kernels.fused_layer_norm import inference_layer_norm
  from bert_keras.kernels.host_tuning import FUSED_LAYER_NORM_MIN_HIDDEN as wide

  def fused(hidden, dtype=None):
    norm = _norm(hidden, dtype)
    fn = tf.function(lambda r: inference_layer_norm(norm, r), autograph=False)
    return "FusedBatchNormV3" in _op_types(fn, tf.TensorSpec([None, hidden], norm.compute_dtype))

  figure = {"wide": fused(wide), "half": fused(wide // 2), "mixed_float16": fused(wide, "mixed_float16")}
  blocks = {}
  for groups in (1, 2):
    block = _wide_block(groups)
    fn = tf.function(lambda x, m, b=block: b(x, m, training=False), autograph=False)
    blocks[groups] = "FusedBatchNormV3" in _op_types(fn, *_block_specs(wide))
  figure["block"] = blocks
  ok = figure["wide"] and not figure["half"] and not figure["mixed_float16"] and all(blocks.values())
  return ok, f"FusedBatchNormV3 in the graph: {figure} (hidden {wide})"


def _wide_block(head_groups):
  from bert_keras.kernels.host_tuning import FUSED_LAYER_NORM_MIN_HIDDEN as wide
  return _cpu_block(head_groups, hidden=wide, dropout_rate=0.0, attention_dropout_rate=0.0)


@check
def saved_model_fusions():
  """The loaded SavedModel's runtime graph (after grappler): every dense layer one fused matmul
  (+BiasAdd, +GELU for the intermediate), every LayerNorm one _MklLayerNorm."""
  import tensorflow as tf
  from tensorflow.python.eager import context
  from bert_keras.kernels.host_tuning import FUSED_LAYER_NORM_MIN_HIDDEN as wide
  if not _mkl_enabled():
    return None, "the GELU and LayerNorm fusions are oneDNN's"
  block = _wide_block(1)
  module = tf.Module()
  module.block = block.block
  module.infer = tf.function(lambda x, m: block(x, m, training=False),
                             input_signature=_block_specs(wide), autograph=False)
  with tempfile.TemporaryDirectory() as path:
    tf.saved_model.save(module, path)
    loaded = tf.saved_model.load(path)
    ctx = context.context()
    ctx.enable_run_metadata()  # before the first call: graphs are recorded at instantiation
    try:
      loaded.infer(*_block_inputs(2, 6, hidden=wide))
      metadata = ctx.export_run_metadata()
    finally:
      ctx.disable_run_metadata()
  ops = _fused_op_names(node for function in metadata.function_graphs
                        for graph in function.partition_graphs for node in graph.node)
  matmuls = {op: n for op, n in ops.items() if "FusedMatMul" in op}
  gelu = sum(n for op, n in matmuls.items() if op.endswith("+BiasAdd+GeluExact"))
  unfused = {"MatMul", "_MklMatMul", "BiasAdd", "Erf", "Erfc", "FusedBatchNormV3",
             "_MklNativeFusedBatchNormV3", "Rsqrt"} & set(ops)
  ok = sum(matmuls.values()) == 4 and gelu == 1 and ops["_MklLayerNorm"] == 2 and not unfused
  return ok, f"fused matmuls {matmuls}, _MklLayerNorm {ops['_MklLayerNorm']}, unfused {unfused}"


@check
def head_groups_ops():
  import tensorflow as tf
  from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
  block = _cpu_block(head_groups=2, dropout_rate=0.0, attention_dropout_rate=0.0)
  x, mask = _block_inputs(1, 6)

  def matmul_shapes(fn):
    graph = fn.get_concrete_function(x, mask).graph
    return sorted((op.inputs[0].shape[1], op.inputs[1].shape[1])
                  for op in graph.get_operations() if op.type == "MatMul")

  infer = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  train = tf.function(lambda x, m: block(x, m, training=True), autograph=False)
  ops = collections.Counter(_op_types(infer, *_block_specs()))
  # Per group: q-k-v of 2 heads (32 -> 48), its heads' output rows (16 -> 32), half the widening
  # (32 -> 32) and the matching narrowing rows (32 -> 32). Training runs the unsplit block.
  split_ok = (ops["Split"] == 2 and ops["Softmax"] == 2
              and matmul_shapes(infer) == sorted([(32, 48), (16, 32), (32, 32), (32, 32)] * 2))
  train_ok = (matmul_shapes(train) == sorted([(32, 96), (32, 32), (32, 64), (64, 32)])
              and "Split" not in _op_types(train, x, mask))
  own = {id(w) for w in block.block.weights}
  copies = [w for w in block.weights if id(w) not in own]
  copies_ok = len(copies) == 8 and not any(w.trainable for w in copies)
  unsplit = {id(w) for w in CpuTransformerBlock(block.block).weights} == own
  return (split_ok and train_ok and copies_ok and unsplit,
          f"inference Split {ops['Split']}, Softmax {ops['Softmax']}, per-group matmuls "
          f"{split_ok}; training unsplit {train_ok}; weight copies {len(copies)} (untrainable "
          f"{copies_ok}), none unsplit {unsplit}")


def _intermediate_rows(model, inputs):
  """Row counts of the traced graph's feed-forward GEMMs (batch * rows, intermediate)."""
  import tensorflow as tf
  specs = {k: tf.TensorSpec(v.shape, tf.int32) for k, v in inputs.items()}
  graph = tf.function(lambda x: model(x, training=False)).get_concrete_function(specs).graph
  return sorted(op.outputs[0].shape[0] for op in graph.get_operations()
                if op.type == "MatMul" and "/intermediate" in op.name)


@check
def last_block_rows():
  import keras
  import numpy as np
  from bert_keras import kernels
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.models.bert_pretrainer import BertPretrainer
  from bert_keras.models.heads.bert_classifier import BertClassifier
  from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice
  tiny = dict(vocab_size=60, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64)
  rng = np.random.default_rng(4)
  ids = rng.integers(5, 60, (4, 12)).astype("int32")
  inputs = {"input_word_ids": ids, "input_mask": np.ones_like(ids), "input_type_ids": 0 * ids,
            "masked_lm_positions": np.array([[5, 5, 0, 11], [1, 9, 10, 2], [7, 3, 1, 4],
                                             [0, 0, 0, 0]], "int32")}
  keras.utils.set_random_seed(3)
  pretrainer = kernels.implementation_of(BertPretrainer(BertEncoder(**tiny)), "cpu")
  # batch 4 x seq 12 = 48 rows in the first block; the last block runs 4 x (1 + 4) = 20 rows:
  # [CLS] and the 4 masked positions.
  rows = _intermediate_rows(pretrainer, inputs)
  results = [("[pretrainer]", rows == [20, 48], f"feed-forward rows {rows} (expected [20, 48])")]
  del inputs["masked_lm_positions"]
  for kind in ("classifier", "choice"):
    keras.utils.set_random_seed(5)
    encoder = BertEncoder(**tiny)
    head = BertClassifier(encoder, 3) if kind == "classifier" else BertMultipleChoice(encoder)
    rows6 = {k: np.concatenate([v, v[:2]]) for k, v in inputs.items()}  # 6 sequences
    if kind == "choice":
      rows6 = {k: v.reshape(3, 2, 12) for k, v in rows6.items()}
    # 6 sequences x 12 positions in the first block; the last block on the 6 [CLS] rows.
    rows = _intermediate_rows(kernels.implementation_of(head, "cpu"), rows6)
    results.append((f"[{kind}]", rows == [6, 72], f"feed-forward rows {rows} (expected [6, 72])"))
  return results


@check
def bit_dropout_kernels():
  import keras
  import tensorflow as tf
  from bert_keras.kernels.bit_dropout import bit_dropout
  layer = keras.layers.Dropout(0.1, seed=2)

  @tf.function
  def run(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = bit_dropout(layer, x, training=True)
    return tape.gradient(y, x)

  compiled = [op for op in run.get_concrete_function(tf.TensorSpec((4, 8), tf.float32))
              .graph.get_operations()
              if op.type == "PartitionedCall" and op.node_def.attr["_XlaMustCompile"].b]
  forward = [op for op in compiled if "forward" in op.node_def.attr["f"].func.name]
  masks = sum(o.shape.as_list() == [4, 8] and o.dtype == tf.bool
              for op in forward for o in op.outputs)
  return (len(compiled) == 2 and len(forward) == 1 and masks == 0,
          f"XLA kernels {len(compiled)} (forward {len(forward)}), boolean masks kept {masks}")


@check
def bit_dropout_bits():
  import keras
  import numpy as np
  import tensorflow as tf
  from bert_keras.kernels import bit_dropout as module

  def masks_and_grads(shape):
    layer = keras.layers.Dropout(0.3, seed=11)
    x = tf.abs(tf.constant(np.random.default_rng(1).normal(3.0, 1.0, shape), tf.float32)) + 0.5

    @tf.function
    def run():
      outs = []
      for _ in range(2):
        with tf.GradientTape() as tape:
          tape.watch(x)
          y = module.bit_dropout(layer, x, training=True)
        outs.append((y, tape.gradient(y, x, output_gradients=tf.sin(x))))
      return outs
    return [(y.numpy(), g.numpy()) for y, g in run()]

  results = []
  for shape in ((4, 3, 16, 16), (64, 48), (7,)):
    fused = masks_and_grads(shape)
    with patched(module, "_fused_dropout", module._dropout):  # pylint: disable=protected-access
      plain = masks_and_grads(shape)
    same = all(np.array_equal(a, b) for f, p in zip(fused, plain) for a, b in zip(f, p))
    results.append((f"[{shape}]", same, f"XLA and TF-op masks and gradients identical: {same}"))
  return results


@check
def bit_dropout_unknown_shape():
  import keras
  import tensorflow as tf
  from bert_keras.kernels.bit_dropout import bit_dropout
  layer = keras.layers.Dropout(0.5, seed=4)
  fn = tf.function(lambda x: bit_dropout(layer, x, training=True))
  hashed = "BitwiseXor" in _op_types(fn, tf.TensorSpec((None, 8), tf.float32))
  return not hashed, f"hash ops in the graph of an unknown batch size: {hashed}"


@check
def wide_dense_copies():
  import keras
  import tensorflow as tf
  from bert_keras.kernels import wide_dense
  from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
  from bert_keras.models.transformer_block import TransformerBlock
  copies = []
  original = wide_dense._copy_transposed  # pylint: disable=protected-access

  def spy(kernel):
    copies.append(tuple(kernel.shape))
    return original(kernel)

  def step_of(layer, x, mask, variables):
    @tf.function
    def step(x):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x, mask, training=True))
      return tape.gradient(loss, variables)
    return step(x)

  figure = {}
  with patched(wide_dense, "_copy_transposed", spy):
    dense = keras.layers.Dense(96)
    dense.build((None, 24))

    @tf.function
    def input_gradient(x):
      with tf.GradientTape() as tape:
        tape.watch(x)
        y = wide_dense.wide_dense(dense, x, dense.activation)
      return tape.gradient(y, x)

    input_gradient(tf.ones((40, 24)))
    figure["wide_dense"], copies[:] = list(copies), []
    no_bias = keras.layers.Dense(8, use_bias=False)
    no_bias.build((None, 4))
    tf.function(lambda t: wide_dense.wide_dense(no_bias, t, tf.nn.relu))(tf.ones((3, 4)))
    figure["no bias"], copies[:] = list(copies), []
    block = TransformerBlock(num_heads=2, intermediate_size=64, dropout_rate=0.0,
                             attention_dropout_rate=0.0)
    x, mask = tf.random.stateless_normal((2, 5, 16), seed=[1, 2]), tf.ones((2, 5, 5))
    block(x, mask)
    for training, fused in ((False, True), (True, False)):
      cpu = CpuTransformerBlock(block, fused_elementwise=fused)
      tf.function(lambda x, c=cpu, t=training: c(x, mask, training=t))(x)
    figure["block outside fused training"], copies[:] = list(copies), []
    step_of(CpuTransformerBlock(block), x, mask, block.trainable_variables)
    figure["block training step"] = list(copies)
  ok = figure == {"wide_dense": [(24, 96)], "no bias": [], "block outside fused training": [],
                  "block training step": [(16, 64)]}
  return ok, f"transposed kernel copies traced: {figure}"


# === Serving ===

_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad", "a",
          "plot", "##s", ",", "."]
_TEXTS = ["the film was good", "a bad plot , the films", "", "good good good " * 20, "bad"]


def _tiny_encoder(hidden_size=16, num_heads=2, seed=0):
  import keras
  from bert_keras.configs.model import get_model_config
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.text.bert_tokenizer import BertTokenizer
  keras.utils.set_random_seed(seed)
  config = get_model_config("bert_tiny", vocab_size=len(_VOCAB), hidden_size=hidden_size,
                            num_layers=2, num_heads=num_heads, intermediate_size=32,
                            max_position_embeddings=16)
  return BertEncoder.from_model_config(config), BertTokenizer(vocabulary=_VOCAB)


@check
def auto_jit_switch():
  import tensorflow as tf
  from bert_keras.export import export_task_model as exporter
  from bert_keras.export.serving_options import ServingOptions
  from bert_keras.kernels.host_tuning import AUTO_XLA_MAX_ROWS
  encoder, tokenizer = _tiny_encoder()
  with tempfile.TemporaryDirectory() as root:
    path = exporter.export_task_model(encoder, "encoder", tokenizer, os.path.join(root, "auto"),
                                      16, options=ServingOptions(jit_compile="auto"))
    library = {fn.signature.name: fn for fn in _saved_library(path).function}
  xla = sum(1 for fn in library.values() if fn.attr["_XlaMustCompile"].b)

  def reaches_xla(name, seen):
    if library[name].attr["_XlaMustCompile"].b:
      return True
    seen.add(name)
    called = {node.attr["f"].func.name for node in library[name].node_def if "f" in node.attr}
    return any(reaches_xla(c, seen) for c in called - seen if c in library)

  # Lowered to Switch/Merge, a one-row call would still visit every node of the plain graph.
  switches = [("_lower_using_switch_merge" in node.attr, node.attr["_lower_using_switch_merge"].b)
              for fn in library.values() for node in fn.node_def
              if node.op in ("If", "StatelessIf")
              and reaches_xla(node.attr["then_branch"].func.name, set())]
  # Which branch runs, counted at run time by wrapping the module's two model functions.
  module = exporter.build_serving_module(encoder, "encoder", tokenizer, 16,
                                         options=ServingOptions(jit_compile="auto"))
  counts = {}
  for branch in ("_xla_model", "_graph_model"):
    counts[branch] = counter = tf.Variable(0)
    model_fn = getattr(module, branch)
    setattr(module, branch, tf.function(
        lambda inputs, fn=model_fn, counter=counter: (counter.assign_add(1), fn(inputs))[1],
        autograph=False))
  module.serve(tf.constant(_TEXTS[:1]))
  module.serve(tf.constant(_TEXTS[1]))  # the scalar form: one row
  module.serve(tf.constant(_TEXTS[:AUTO_XLA_MAX_ROWS + 1]))
  taken = {branch: int(counter.numpy()) for branch, counter in counts.items()}
  ok = (xla >= 1 and switches and all(s == (True, False) for s in switches)
        and taken == {"_xla_model": 2, "_graph_model": 1})
  return ok, (f"XLA functions {xla}; If nodes (lowering attribute set, lowered) {switches}; "
              f"1, 1 and {AUTO_XLA_MAX_ROWS + 1} rows ran {taken}")


def _model_split_ops(module):
  """Split ops (the head groups' splits) in a serving module's traced model function."""
  from bert_keras.export.serving_module import tokenized_specs
  graph = module._run_model.get_concrete_function(  # pylint: disable=protected-access
      tokenized_specs()).graph.as_graph_def()
  nodes = list(graph.node) + [node for fn in graph.library.function for node in fn.node_def]
  return sum(1 for node in nodes if node.op == "Split")


@check
def export_head_groups():
  from bert_keras.export import export_task_model as exporter
  from bert_keras.export.serving_options import ServingOptions
  from bert_keras.kernels.host_tuning import DEFAULT_HEAD_GROUPS, UNSPLIT_MIN_HIDDEN
  encoder, tokenizer = _tiny_encoder()
  with tempfile.TemporaryDirectory() as root:
    path = exporter.export_task_model(encoder, "encoder", tokenizer, os.path.join(root, "g"), 16,
                                      options=ServingOptions(head_groups=2))
    saved = sum(1 for fn in _saved_library(path).function for node in fn.node_def
                if node.op == "Split")
  build = lambda model, **kw: exporter.build_serving_module(model, "encoder", tokenizer, 16,
                                                          options=ServingOptions(**kw))
  figure = {"saved, 2 groups": saved}
  for groups in (1, 2):
    module = build(encoder, head_groups=groups)
    figure[f"{groups} groups"] = _model_split_ops(module)
    figure[f"{groups} groups weight copies"] = len(getattr(module, "head_group_weights", []))
  figure[f"default ({DEFAULT_HEAD_GROUPS})"] = _model_split_ops(build(encoder))
  figure["reference"] = _model_split_ops(build(encoder, implementation="reference"))
  figure["xla, 2 groups"] = _model_split_ops(build(encoder, jit_compile=True, head_groups=2))
  wide, _ = _tiny_encoder(hidden_size=UNSPLIT_MIN_HIDDEN, num_heads=12, seed=1)
  figure["wide, default"] = _model_split_ops(build(wide))
  figure["wide, 2 groups"] = _model_split_ops(build(wide, head_groups=2))
  ok = (saved > 0 and figure["1 groups"] == 0 and figure["2 groups"] > 0
        and figure["1 groups weight copies"] == 0 and figure["2 groups weight copies"] == 2 * 2 * 4
        and (figure[f"default ({DEFAULT_HEAD_GROUPS})"] > 0) == (DEFAULT_HEAD_GROUPS > 1)
        and figure["reference"] == 0 and figure["xla, 2 groups"] == 0
        and figure["wide, default"] == 0 and figure["wide, 2 groups"] > 0)
  return ok, f"Split ops: {figure}"


@check
def length_buckets_traced_once():
  import tensorflow as tf
  from bert_keras import resources
  from bert_keras.configs.model import get_model_config
  from bert_keras.export import export_task_model as exporter
  from bert_keras.export.serving_module import ServingModule
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.text.bert_tokenizer import BertTokenizer
  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  encoder = BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=tokenizer.vocab_size, num_layers=1))
  traces = []
  run_by_bucket = ServingModule._run_by_bucket  # pylint: disable=protected-access
  with patched(ServingModule, "_run_by_bucket",
               lambda self, inputs: traces.append(1) or run_by_bucket(self, inputs)):
    module = exporter.build_serving_module(encoder, "encoder", tokenizer, 64)
    module.signatures()["serving_text"](text_a=tf.constant(["a film", "the plot was good"]))
    with tempfile.TemporaryDirectory() as path:
      exporter.save_serving_module(module, os.path.join(path, "export"))
  return len(traces) == 1, f"bucket function traced {len(traces)} time(s) for every signature"


# === Text ===

@check
def tokenizer_conds():
  import tensorflow as tf
  from bert_keras import resources
  from bert_keras.text.bert_tokenizer import BertTokenizer
  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  fn = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
  graph_def = fn.get_concrete_function().graph.as_graph_def()
  ours = {f.signature.name: f for f in graph_def.library.function}
  top = [n for n in graph_def.node if n.op in ("If", "StatelessIf")]
  inner = []
  if len(top) == 1:
    chunks = ours[top[0].attr["else_branch"].func.name]
    inner = [n for n in chunks.node_def if n.op in ("If", "StatelessIf")
             and ours[n.attr["then_branch"].func.name].signature.name.startswith("cond")
             and len(ours[n.attr["then_branch"].func.name].node_def) > 100]
  lowered = [n.name for n in top + inner if n.attr["_lower_using_switch_merge"].b]
  ok = len(top) == 1 and len(inner) == 2 and not lowered
  return ok, f"top-level If {len(top)}, large inner If {len(inner)}, lowered {lowered}"


@check
def packer_dense():
  import tensorflow as tf
  import tensorflow_text as tf_text
  from bert_keras.text.bert_packer import BertPacker
  packer = BertPacker(8, cls_id=2, sep_id=3, pad_id=0)

  def trimmer_ops(fn, *specs):
    return sum("RoundRobinTrimmer" in op.name
               for op in fn.get_concrete_function(*specs).graph.get_operations())

  single = tf.function(lambda values, lengths: packer(
      [tf.RaggedTensor.from_row_lengths(values, lengths)]), autograph=False)
  spec = tf.RaggedTensorSpec([None, None], tf.int32)
  figure = {"single": trimmer_ops(single, tf.TensorSpec([None], tf.int32),
                                  tf.TensorSpec([None], tf.int64)),
            "pair": trimmer_ops(tf.function(lambda a: packer([a, a]), autograph=False), spec)}
  # The control: tf-text's ragged packing, which the dense paths replace, has them.
  control = trimmer_ops(tf.function(lambda a: tf_text.RoundRobinTrimmer(max_seq_length=6).trim(
      [a, a]), autograph=False), spec)
  return not any(figure.values()) and control > 0, (
      f"RoundRobinTrimmer ops: {figure}, tf-text's ragged trimming {control}")


@check
def wordpiece_cache_bound():
  from bert_keras import resources
  from bert_keras.data import cached_wordpiece_tokenizer as cwt
  from bert_keras.text.vocab import load_vocab
  from tests.text import corpora
  with patched(cwt, "MAX_CACHE_ENTRIES", 50):
    fast = cwt.CachedWordpieceTokenizer(load_vocab(resources.uncased_vocab_path()))
    fast.encode(corpora.wikipedia_lines(every=50))
  sizes = (len(fast._word_cache), len(fast._basic_cache))  # pylint: disable=protected-access
  return max(sizes) <= 50, f"word and text cache entries {sizes} of at most 50"


# === Data ===

@check
def corpus_ingestion_runs():
  import pathlib
  from bert_keras.data import sorted_shards
  from bert_keras.data.pretraining_instances import stable_hash
  from tests.data.corpus_fixtures import ingest, unicode_corpus
  written = []
  write_run = sorted_shards.write_run

  def recording_write_run(path, rows):
    rows = list(rows)
    written.append((os.path.basename(path), sum(len(k) + len(r) for k, r in rows)))
    write_run(path, rows)

  run_bytes, results = 400, []
  with tempfile.TemporaryDirectory() as root, patched(sorted_shards, "write_run",
                                                      recording_write_run):
    root = pathlib.Path(root)
    docs = unicode_corpus(root)
    paths = ingest(root, "out", num_shards=2, run_bytes=run_bytes,
                    beam_args=["--runner=FnApiRunner"])  # in this process: the recording sees it
    largest = max(len(("\n".join(s) + "\n\n").encode("utf-8")) + len(i.encode("utf-8"))
                  for i, s in docs.items())
    for shard in range(2):
      runs = [size for name, size in written if name.startswith(f"shard-{shard:05d}-")]
      ids = sum(len(i.encode("utf-8")) for i in docs if stable_hash("shard", i) % 2 == shard)
      ok = (len(runs) >= 5 and max(runs) < run_bytes + largest
            and sum(runs) == os.path.getsize(paths[shard]) + ids)
      results.append((f"[shard {shard}]", ok, f"{len(runs)} runs of at most {max(runs)} bytes "
                      f"(run_bytes {run_bytes}, largest document {largest})"))
  return results


# === Training ===

@check
def adamw_step_scalars():
  """Keras' AdamW makes its two bias corrections (pow) for every variable, FusedAdamW (expm1) once
  per dtype: the learning rate, bias corrections and decay are the step's."""
  import keras
  import tensorflow as tf
  from bert_keras.training.fused_adamw import FusedAdamW

  def update_ops(optimizer, variables):
    @tf.function
    def apply(grads):
      optimizer.apply_gradients(zip(grads, variables))
    return collections.Counter(_op_types(apply, [tf.TensorSpec(v.shape, v.dtype)
                                                 for v in variables]))
  results = []
  for n in (3, 12):
    variables = [tf.Variable(tf.ones([4, i + 1])) for i in range(n)]
    fused = update_ops(FusedAdamW(learning_rate=1e-3, weight_decay=0.01), variables)
    plain = update_ops(keras.optimizers.AdamW(learning_rate=1e-3, weight_decay=0.01), variables)
    ok = fused["Expm1"] == 2 and fused["StatefulPartitionedCall"] == n and plain["Pow"] >= 2 * n
    results.append((f"[{n} variables]", ok, f"Expm1 {fused['Expm1']}, kernel calls "
                    f"{fused['StatefulPartitionedCall']}; Keras Pow {plain['Pow']}"))
  mixed = [tf.Variable(tf.ones([3], dtype)) for dtype in (tf.float32, tf.float64, tf.float32)]
  expm1 = update_ops(FusedAdamW(learning_rate=1e-3), mixed)["Expm1"]
  results.append(("[2 dtypes]", expm1 == 4, f"Expm1 {expm1}"))
  return results


@check
def sum_over_steps_traced_once():
  """The loop's first step and its body are one nested tf.function: a model's forward and backward
  pass is traced once, not twice."""
  import tensorflow as tf
  from bert_keras.training.trainer import _sum_over_steps  # pylint: disable=protected-access
  traces = []
  counter = tf.Variable(0.0)

  def step():
    traces.append(1)
    counter.assign_add(1.0)
    return {"steps": tf.constant(1.0)}

  run = tf.function(lambda n: _sum_over_steps(step, n))
  sums = run(tf.constant(4))
  run(tf.constant(2))
  ok = len(traces) == 1 and float(sums["steps"]) == 4.0 and float(counter.numpy()) == 6.0
  return ok, f"step traced {len(traces)} time(s) for two loop calls"


@check
def pretraining_file_calls():
  """Two training patterns in two directories and a held-out one: 3 globs, 3 summary.json reads,
  one stat and one first-record read per file, fresh or resumed; the input pipelines and the
  unigram baseline built on the result make no file call."""
  import tensorflow as tf
  from bert_keras.configs.training import TrainingConfig
  from bert_keras.training import pretrain
  from bert_keras.training.pretraining_input import label_frequencies, make_dataset
  from tests.training import pretraining_runs as R
  from tests.training.pretraining_records import PRED, SEQ, write_shards
  counts = collections.Counter()

  def counted(name, fn):
    def wrapper(*args, **kwargs):
      counts[name] += 1
      return fn(*args, **kwargs)
    return wrapper

  gfile = tf.io.gfile.GFile

  def opened(path, *args, **kwargs):
    counts[f"open {os.path.basename(path)}"] += 1
    return gfile(path, *args, **kwargs)

  results = []
  with contextlib.ExitStack() as stack:
    for name in ("glob", "isdir", "stat"):
      stack.enter_context(patched(tf.io.gfile, name, counted(name, getattr(tf.io.gfile, name))))
    stack.enter_context(patched(tf.io.gfile, "GFile", opened))
    stack.enter_context(patched(tf.compat.v1.io, "tf_record_iterator", counted(
        "record reads", tf.compat.v1.io.tf_record_iterator)))
    for resumed in (False, True):
      with tempfile.TemporaryDirectory() as root:
        train = f"{write_shards(os.path.join(root, 'a'))},{write_shards(os.path.join(root, 'b'), seed=1)}"
        config = TrainingConfig.from_flat(
            input_files=train, eval_input_files=write_shards(os.path.join(root, "c"), seed=2),
            model="bert_tiny", model_overrides=dict(R.TINY_MODEL, num_layers=1,
                                                           vocab_size=128),
            max_seq_length=SEQ, max_predictions_per_seq=PRED, train_batch_size=8,
            output_dir=os.path.join(root, "run"), vocab_size=128, eval_batch_size=8)
        if resumed:
          manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=tf.Variable(1)),
                                               config.outputs.output_dir, max_to_keep=1)
          manager.save()
          with open(os.path.join(config.outputs.output_dir, "training_config.json"), "w",
                    encoding="utf-8") as f:
            f.write(config.to_json())
        counts.clear()
        resolved = pretrain.resolve_inputs(config)
        resolving = dict(counts)
        counts.clear()
        make_dataset(config, resolved.train)
        make_dataset(config, resolved.evaluation, training=False)
        label_frequencies(resolved.train, seq_length=SEQ, max_predictions=PRED)
        after = dict(counts)
      ok = (resolving.get("glob") == 3 and resolving.get("open summary.json") == 3
            and resolving.get("stat") == 6 and resolving.get("record reads") == 6 and not after)
      results.append((f"[{'resumed' if resumed else 'fresh'}]", ok,
                      f"resolving {resolving}; input pipelines after it {after}"))
  return results


@check
def init_checkpoint_detected_once():
  """--init_checkpoint's format is detected once, before any data is read; the checks and the
  model build read the result (they detected it again, up to six times)."""
  from bert_keras.configs.model import get_model_config
  from bert_keras.configs.tasks import get_task_config
  from bert_keras.interop import loader
  from bert_keras.models.bert_encoder import BertEncoder
  from bert_keras.tasks import finetuning
  calls = []
  detect = loader.detect_format
  with tempfile.TemporaryDirectory() as directory:
    BertEncoder.from_model_config(get_model_config("bert_tiny", num_layers=1)).save(
        os.path.join(directory, "encoder.keras"))
    with patched(loader, "detect_format", lambda path: calls.append(path) or detect(path)):
      run = finetuning.RunConfig(init_checkpoint=directory)
      task_config = get_task_config("polarity", max_seq_length=16)
      source = finetuning.ModelFamily().resolve(run, task_config)
      finetuning.build_encoder(source, task_config)
  return len(calls) == 1, f"detect_format calls {len(calls)}"


def main(argv):
  only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
  failed = 0
  for fn in _CHECKS:
    if only not in fn.__name__:
      continue
    try:
      outcome = fn()
      rows = outcome if isinstance(outcome, list) else [("",) + tuple(outcome)]
    except Exception:  # pylint: disable=broad-except
      rows = [("", False, traceback.format_exc(limit=-3).strip().replace("\n", " | "))]
    for suffix, ok, figure in rows:
      status = "SKIP" if ok is None else "PASS" if ok else "FAIL"
      failed += status == "FAIL"
      print(f"{fn.__name__}{suffix}: {status} {figure}", flush=True)
  print(f"{failed} failed" if failed else "all passed")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
