"""bert_keras.atomic_io: the new content or the old one, never a partial file or a leftover."""

import os
import stat

import pytest

from bert_keras.atomic_io import gfile_write_text, write_text


class _Unwritable:
  """Not str or bytes: the write fails after the temporary file was created."""


@pytest.mark.parametrize("write", [write_text, gfile_write_text])
def test_writes_text_and_bytes_and_replaces(tmp_path, write):
  path = tmp_path / "out.json"
  write(str(path), "première\n")
  assert path.read_text(encoding="utf-8") == "première\n"
  write(str(path), b"\x00\x01")
  assert path.read_bytes() == b"\x00\x01"
  assert os.listdir(tmp_path) == ["out.json"]


@pytest.mark.parametrize("write", [write_text, gfile_write_text])
def test_a_failing_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, write):
  path = tmp_path / "metrics.json"
  write(str(path), "old\n")
  with pytest.raises(TypeError):
    write(str(path), _Unwritable())
  assert path.read_text() == "old\n"
  assert os.listdir(tmp_path) == ["metrics.json"]


def test_local_file_is_readable_by_others(tmp_path):
  path = tmp_path / "config.json"
  write_text(path, "{}")
  assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_missing_directory_is_an_error_not_a_stray_file(tmp_path):
  with pytest.raises(FileNotFoundError):
    write_text(str(tmp_path / "absent" / "x.txt"), "x")
  assert os.listdir(tmp_path) == []
