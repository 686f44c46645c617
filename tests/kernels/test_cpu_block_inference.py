"""The CPU block's inference path computes the block's math, in ops TF's grappler fuses."""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.kernels.fused_layer_norm import inference_layer_norm
from tests.models.block_reference import HIDDEN
from tests.models.block_reference import block as _reference_block
from tests.models.block_reference import inputs as _inputs
from tests.models.block_reference import reference as _reference

_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def _block(head_groups=1):
  """The CPU implementation of the oracle's block; `.block` is the block itself."""
  return CpuTransformerBlock(_reference_block(), head_groups)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("batch,seq,causal", [(1, 1, False), (1, 16, False), (3, 7, True)])
def test_inference_equals_the_reference_math(groups, batch, seq, causal):
  block = _block(head_groups=groups)
  x, mask = _inputs(batch, seq, causal, seed=seq)
  expected = _reference(block.block, x, mask)
  eager = block(tf.constant(x), tf.constant(mask), training=False).numpy()
  # Traced: grappler and oneDNN rewrite the graph (fused matmuls), as in an exported model.
  traced = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  for got in (eager, traced(tf.constant(x), tf.constant(mask)).numpy()):
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=1e-4)


def test_inference_layer_norm_equals_the_keras_layer():
  norm = keras.layers.LayerNormalization(epsilon=1e-12)
  norm.build((None, HIDDEN))
  rng = np.random.default_rng(3)
  norm.gamma.assign(rng.normal(1.0, 0.3, HIDDEN).astype("float32"))
  norm.beta.assign(rng.normal(0.0, 0.3, HIDDEN).astype("float32"))
  # A large shared offset: a one-pass E[x^2] - E[x]^2 variance would lose digits here.
  rows = tf.constant(rng.normal(size=(40, HIDDEN)) * 0.5 + 30.0, tf.float32)
  np.testing.assert_allclose(inference_layer_norm(norm, rows), norm(rows), atol=2e-5)
  assert inference_layer_norm(norm, tf.zeros((0, HIDDEN))).shape == (0, HIDDEN)


def _optimized_op_counts(fn, *specs):
  """Op types (with their fused_ops) of fn's graph after grappler, placed on the CPU."""
  from tensorflow.core.protobuf import config_pb2
  from tensorflow.python.framework import meta_graph
  from tensorflow.python.grappler import tf_optimizer
  concrete = fn.get_concrete_function(*specs)
  graph = meta_graph.create_meta_graph_def(graph=concrete.graph)
  for node in graph.graph_def.node:
    node.device = _CPU  # the remapper only fuses ops placed on a CPU
  graph.collection_def["train_op"].node_list.value.extend(t.op.name for t in concrete.outputs)
  optimized = tf_optimizer.OptimizeGraph(config_pb2.ConfigProto(), graph)
  return collections.Counter(
      node.op + "".join(f"+{op.decode()}" for op in node.attr["fused_ops"].list.s)
      for node in optimized.node)


@pytest.mark.parametrize("groups", [1, 2])
def test_grappler_fuses_the_inference_graph(groups):
  from tensorflow.python.util import _pywrap_util_port
  if not _pywrap_util_port.IsMklEnabled():
    pytest.skip("the GELU fusion is oneDNN's (TF_ENABLE_ONEDNN_OPTS=0 or a non-x86 build)")
  block = _block(head_groups=groups)
  spec = [tf.TensorSpec([None, None, HIDDEN]), tf.TensorSpec([None, None, None])]
  fn = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  ops = _optimized_op_counts(fn, *spec)
  # Per group: its q-k-v as MatMul+BiasAdd, its share of the widening +GELU too. Unsplit, the
  # output projections are MatMul+BiasAdd as well; split, each group's partial output products
  # are plain MatMuls, summed before one BiasAdd.
  assert ops["_FusedMatMul+BiasAdd+GeluExact"] == groups, ops
  assert ops["_FusedMatMul+BiasAdd"] == (3 if groups == 1 else groups), ops
  assert ops["MatMul"] == (0 if groups == 1 else 2 * groups), ops
  assert not {"Erf", "Erfc"} & set(ops), ops
  assert ops["Softmax"] == groups and ops["Split"] == (0 if groups == 1 else 2), ops
  # LayerNorm: 2 reductions each, no leftovers of Keras' form (Neg, AddN, gamma reshapes).
  assert ops["Mean"] == 2 * 2 and not {"Neg", "SquaredDifference"} & set(ops), ops
  x, mask = _inputs(2, 9, causal=False, seed=groups)
  np.testing.assert_allclose(fn(tf.constant(x), tf.constant(mask)).numpy(),
                             _reference(block.block, x, mask), atol=2e-5, rtol=1e-4)
