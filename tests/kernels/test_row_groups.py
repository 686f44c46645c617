"""CpuTransformerBlock's row_groups: the split inference graph gives the unsplit block's outputs."""

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


def _block(row_groups=1, **kwargs):
  """The CPU implementation of a reference block (`.block`)."""
  keras.utils.set_random_seed(0)
  block = TransformerBlock(num_heads=4, intermediate_size=64, **kwargs)
  block.build((None, None, HIDDEN))
  return CpuTransformerBlock(block, row_groups)


def _inputs(batch, seq, causal=False, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(batch, seq, HIDDEN)).astype("float32")
  lengths = rng.integers(1, seq + 1, size=batch)  # every row keeps >= 1 real token
  lengths[0] = seq
  mask = (np.arange(seq)[None, None, :] < lengths[:, None, None]).astype("float32")
  mask = np.broadcast_to(mask, (batch, seq, seq)).copy()
  if causal:
    mask *= np.tril(np.ones((seq, seq), "float32"))[None]
  return tf.constant(x), tf.constant(mask)


def _split_ops(fn, *args):
  graph = fn.get_concrete_function(*args).graph
  return [op.type for op in graph.get_operations() if op.type in ("Split", "SplitV")]


@pytest.mark.parametrize("groups", [2, 3])
@pytest.mark.parametrize("batch,seq", [(1, 1), (1, 2), (3, 5), (1, 16), (3, 16)])
@pytest.mark.parametrize("causal", [False, True])
def test_row_groups_equal_the_unsplit_block(groups, batch, seq, causal):
  block = _block()
  x, mask = _inputs(batch, seq, causal, seed=batch * 100 + seq)
  expected = block(x, mask, training=False).numpy()
  np.testing.assert_allclose(block.block(x, mask, training=False).numpy(), expected, atol=1e-5)
  got = CpuTransformerBlock(block.block, groups)(x, mask, training=False).numpy()
  assert got.shape == (batch, seq, HIDDEN)
  np.testing.assert_allclose(got, expected, atol=1e-5)


def test_dynamic_shapes_in_one_traced_graph():
  block = _block(row_groups=2)
  spec = [tf.TensorSpec([None, None, HIDDEN]), tf.TensorSpec([None, None, None])]
  fn = tf.function(lambda x, m: block(x, m, training=False), input_signature=spec,
                   autograph=False)
  assert _split_ops(fn, *spec) == ["SplitV", "SplitV"]  # x and the attention context
  unsplit = _block()
  for batch, seq in ((1, 1), (2, 7), (3, 16), (1, 128)):
    x, mask = _inputs(batch, seq, seed=seq)
    np.testing.assert_allclose(fn(x, mask).numpy(), unsplit(x, mask, training=False).numpy(),
                               atol=1e-5)


def test_training_ignores_row_groups():
  block = _block(row_groups=2, dropout_rate=0.0, attention_dropout_rate=0.0)
  x, mask = _inputs(2, 6)
  train = tf.function(lambda x, m: block(x, m, training=True), autograph=False)
  infer = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  assert _split_ops(train, x, mask) == []
  assert _split_ops(infer, x, mask) != []
  np.testing.assert_allclose(train(x, mask).numpy(), infer(x, mask).numpy(), atol=1e-5)


def test_configs_saved_with_row_groups_still_load_and_values_are_checked():
  config = _block().block.get_config()
  assert "row_groups" not in config
  # Blocks saved while row_groups was their own option (written only when not 1).
  restored = TransformerBlock.from_config({**config, "row_groups": 3})
  assert restored.get_config() == config
  for bad in (0, -1, 1.5):
    with pytest.raises(ValueError, match="row_groups"):
      CpuTransformerBlock(_block().block, row_groups=bad)


def assert_runs_like(split, model, encoder, copies=0):
  """`split`, a CPU implementation of `model`, uses its variables (plus `copies` of its own) and
  gives `encoder`'s outputs on padded batches."""
  own = {id(v) for v in model.variables}
  assert own <= {id(v) for v in split.variables}
  assert len(split.variables) == len(own) + copies
  for batch, seq, padding in ((1, 9, 0), (3, 16, 5)):
    inputs = harness.random_inputs(batch=batch, seq=seq, num_padding=padding, seed=seq)
    expected = encoder(inputs, training=False)
    got = split(inputs, training=False)
    for name in ("sequence_output", "pooled_output"):
      np.testing.assert_allclose(got[name], expected[name], atol=1e-5, err_msg=name)


def test_the_encoder_run_with_row_groups_matches_and_is_left_as_it_was(tmp_path):
  keras.utils.set_random_seed(1)
  encoder = BertEncoder(vocab_size=100, hidden_size=HIDDEN, num_layers=2, num_heads=4,
                        intermediate_size=64)
  path = str(tmp_path / "encoder.keras")
  encoder.save(path)
  restored = keras.saving.load_model(path)
  split = kernels.implementation_of(restored, "cpu", row_groups=2)
  assert_runs_like(split, restored, encoder)
  assert all(type(layer) is TransformerBlock for layer in restored.blocks)
