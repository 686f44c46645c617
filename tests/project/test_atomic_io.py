"""bert_keras.atomic_io: the new content or the old one, never a partial file or a leftover."""

import os
import stat

import pytest

from bert_keras.atomic_io import beam_create, gfile_write_text, staged_dir, write_text


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


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)],
                         ids=["022", "077", "002"])
def test_local_file_mode_is_what_the_umask_gives(tmp_path, umask, mode):
  path = tmp_path / "config.json"
  old = os.umask(umask)
  try:
    write_text(path, "{}")
  finally:
    os.umask(old)
  assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_missing_directory_is_an_error_not_a_stray_file(tmp_path):
  with pytest.raises(FileNotFoundError):
    write_text(str(tmp_path / "absent" / "x.txt"), "x")
  assert os.listdir(tmp_path) == []


def test_beam_create_replaces_the_file_with_the_bytes_as_written(tmp_path):
  path = tmp_path / "shard.txt.gz"  # the name's suffix does not compress the bytes
  path.write_bytes(b"old")
  with beam_create(str(path)) as f:
    f.write(b"new ")
    f.write(b"bytes")
  assert path.read_bytes() == b"new bytes"
  assert os.listdir(tmp_path) == ["shard.txt.gz"]


def test_beam_create_that_fails_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
  path = tmp_path / "shard.txt"
  path.write_bytes(b"old")
  with pytest.raises(RuntimeError, match="reader died"):
    with beam_create(str(path)) as f:
      f.write(b"half")
      raise RuntimeError("reader died")
  assert path.read_bytes() == b"old"
  assert os.listdir(tmp_path) == ["shard.txt"]


def test_a_staged_directory_replaces_the_old_one_whole_or_not_at_all(tmp_path):
  target = tmp_path / "export"
  with staged_dir(str(target)) as stage:
    (tmp_path / stage / "model.pb").write_text("old")
  with pytest.raises(RuntimeError):
    with staged_dir(str(target)) as stage:
      (tmp_path / stage / "half").write_text("new")
      raise RuntimeError("killed midway")
  assert os.listdir(tmp_path) == ["export"] and os.listdir(target) == ["model.pb"]
  with staged_dir(str(target)) as stage:
    (tmp_path / stage / "saved_model.pb").write_text("new")
  assert os.listdir(tmp_path) == ["export"] and os.listdir(target) == ["saved_model.pb"]
