"""CpuTransformerBlock's head_groups: each group's heads and share of the feed-forward width, the
partial projections summed, give the unsplit block's outputs within float rounding. (The split
graph's ops, its per-group projections and its weight copies: bench/check_graphs.py.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import kernels
from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.transformer_block import TransformerBlock
from tests.models import harness

HIDDEN = 32


def _block(head_groups=1, **kwargs):
  """The CPU implementation of a reference block (`.block`): 4 heads of 8, width 64."""
  keras.utils.set_random_seed(0)
  block = TransformerBlock(num_heads=4, intermediate_size=64, **kwargs)
  block.build((None, None, HIDDEN))
  return CpuTransformerBlock(block, head_groups)


def _inputs(batch, seq, causal=False, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(batch, seq, HIDDEN)).astype("float32")
  lengths = rng.integers(1, seq + 1, size=batch)  # every row keeps >= 1 real token
  if batch:
    lengths[0] = seq
  mask = (np.arange(seq)[None, None, :] < lengths[:, None, None]).astype("float32")
  mask = np.broadcast_to(mask, (batch, seq, seq)).copy()
  if causal:
    mask *= np.tril(np.ones((seq, seq), "float32"))[None]
  return tf.constant(x), tf.constant(mask)


@pytest.mark.parametrize("groups", [2, 4])
@pytest.mark.parametrize("batch,seq", [(1, 1), (1, 5), (3, 7), (2, 16), (0, 5)])
@pytest.mark.parametrize("causal", [False, True])
def test_head_groups_equal_the_unsplit_block(groups, batch, seq, causal):
  unsplit = _block()
  x, mask = _inputs(batch, seq, causal, seed=batch * 100 + seq)
  expected = unsplit(x, mask, training=False).numpy()
  np.testing.assert_allclose(unsplit.block(x, mask, training=False).numpy(), expected,
                             atol=1e-5)
  got = CpuTransformerBlock(unsplit.block, head_groups=groups)(x, mask, training=False).numpy()
  assert got.shape == (batch, seq, HIDDEN)
  np.testing.assert_allclose(got, expected, atol=1e-5)


def test_dynamic_shapes_in_one_traced_graph():
  block = _block(head_groups=2)
  spec = [tf.TensorSpec([None, None, HIDDEN]), tf.TensorSpec([None, None, None])]
  fn = tf.function(lambda x, m: block(x, m, training=False), input_signature=spec,
                   autograph=False)
  unsplit = _block()
  for batch, seq in ((1, 1), (2, 7), (3, 16), (1, 128)):
    x, mask = _inputs(batch, seq, seed=seq)
    np.testing.assert_allclose(fn(x, mask).numpy(), unsplit(x, mask, training=False).numpy(),
                               atol=1e-5)


def test_training_with_head_groups_gives_the_inference_values():
  block = _block(head_groups=2, dropout_rate=0.0, attention_dropout_rate=0.0)
  x, mask = _inputs(2, 6)
  train = tf.function(lambda x, m: block(x, m, training=True), autograph=False)
  infer = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  np.testing.assert_allclose(train(x, mask).numpy(), infer(x, mask).numpy(), atol=1e-5)


def test_training_sees_only_the_blocks_own_trainable_weights():
  reference = _block().block
  for groups in (1, 2):
    block = CpuTransformerBlock(reference, head_groups=groups)
    assert [id(w) for w in block.trainable_weights] == [id(w) for w in reference.trainable_weights]


def test_values_are_checked():
  for bad in (0, -1, 1.5):
    with pytest.raises(ValueError, match="head_groups"):
      CpuTransformerBlock(_block().block, head_groups=bad)
  with pytest.raises(ValueError, match="head_groups=3 does not divide num_heads=4"):
    CpuTransformerBlock(_block().block, head_groups=3)


def assert_runs_like(split, model, encoder):
  """`split`, a CPU implementation of `model`, trains `model`'s variables and gives `encoder`'s
  outputs on padded batches."""
  assert {id(v) for v in model.variables} <= {id(v) for v in split.variables}
  assert [id(v) for v in split.trainable_variables] == [id(v) for v in model.trainable_variables]
  for batch, seq, padding in ((1, 9, 0), (3, 16, 5)):
    inputs = harness.random_inputs(batch=batch, seq=seq, num_padding=padding, seed=seq)
    expected = encoder(inputs, training=False)
    got = split(inputs, training=False)
    for name in ("sequence_output", "pooled_output"):
      np.testing.assert_allclose(got[name], expected[name], atol=1e-5, err_msg=name)


def test_the_encoder_run_with_head_groups_matches_and_is_left_as_it_was(tmp_path):
  keras.utils.set_random_seed(1)
  encoder = BertEncoder(vocab_size=100, hidden_size=HIDDEN, num_layers=2, num_heads=4,
                        intermediate_size=64)
  path = str(tmp_path / "encoder.keras")
  encoder.save(path)
  restored = keras.saving.load_model(path)
  assert_runs_like(kernels.implementation_of(restored, "cpu"), restored, encoder)
  split = kernels.implementation_of(restored, "cpu", head_groups=2)
  assert_runs_like(split, restored, encoder)
  assert all(type(layer) is TransformerBlock for layer in restored.blocks)
