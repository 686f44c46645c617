"""The shipped unicode_tables.npz holds exactly what the generator computes from this Python's unicodedata."""

import unicodedata

import numpy as np
import pytest

from bert_keras.text import unicode_tables as ut


@pytest.mark.parametrize("lower_case", [True, False])
def test_data_file_equals_generator(lower_case):
  loaded = ut.load_data_file(lower_case)
  assert loaded is not None, f"{ut.DATA_FILE} is missing or not from Unicode {unicodedata.unidata_version}"
  computed = ut.compute_tables(lower_case)
  assert sorted(loaded) == sorted(computed)
  for name, values in computed.items():
    assert loaded[name].dtype == values.dtype and np.array_equal(loaded[name], values), name
  ut.unicode_tables.cache_clear()
  assert all(np.array_equal(ut.unicode_tables(lower_case)[k], v) for k, v in computed.items())


def test_other_unicode_version_is_not_used(tmp_path):
  path = str(tmp_path / "tables.npz")
  np.savez(path, unidata_version=np.asarray("0.0.0"), **{"uncased/class_starts": np.zeros(1, np.int32)})
  assert ut.load_data_file(True, path) is None
  assert ut.load_data_file(True, str(tmp_path / "missing.npz")) is None
