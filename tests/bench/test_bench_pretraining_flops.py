"""The pretraining bench's two counts of ours' executed FLOPs agree: the closed form that gives
the HFU column (`executed_flops_per_sequence`) and the GEMM list the ceiling times
(`ours_gemm_specs`), and with a full last block the list gives the issue's formula."""

import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_pretraining.py")


@pytest.fixture(scope="module")
def bench():
  spec = importlib.util.spec_from_file_location("bench_pretraining", _PATH)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


@pytest.mark.parametrize("shape", ["mini", "base"])
def test_gemm_list_counts_the_executed_flops(bench, shape):
  s = bench.SHAPES[shape]
  listed = bench.gemm_flops(bench.ours_gemm_specs(**s))
  assert listed == s["batch"] * bench.executed_flops_per_sequence(**s)


@pytest.mark.parametrize("shape", ["mini", "base"])
def test_full_last_block_gives_the_formula(bench, shape):
  s = bench.SHAPES[shape]
  listed = bench.gemm_flops(bench.ours_gemm_specs(**s, last_block_rows=bench.SEQ))
  assert listed == s["batch"] * bench.flops_per_sequence(**s)
  assert bench.executed_flops_per_sequence(**s) < bench.flops_per_sequence(**s)


def test_gemm_flops_reads_transposes_and_batch_dims(bench):
  # (2, 3, 4) x (2, 4, 5): 2 * 2*3*4*5; transposed operands give the same product.
  assert bench.gemm_flops([((2, 3, 4), (2, 4, 5), False, False)]) == 240
  assert bench.gemm_flops([((2, 4, 3), (2, 5, 4), True, True)]) == 240
  assert bench.gemm_flops([((7, 3), (7, 5), True, False)]) == 2 * 3 * 7 * 5


def test_gemm_list_shapes_chain(bench):
  # Every GEMM's contracted dimensions agree (a shape slip in the list would break the ceiling run).
  for a, b, ta, tb in bench.ours_gemm_specs(**bench.SHAPES["mini"]):
    k_a = a[-2] if ta else a[-1]
    k_b = b[-1] if tb else b[-2]
    assert k_a == k_b, (a, b, ta, tb)
    assert a[:-2] == b[:-2]
