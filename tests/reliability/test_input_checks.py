"""Input paths checked before TensorFlow loads (bert_keras/input_checks.py): a gs:// path without
a network is one line within a few seconds (TensorFlow's GCS file system retried for 104 s,
silently); an unreadable file or a directory in its place is named."""

import socket
import time

import pytest

from bert_keras import input_checks
from bert_keras.errors import UserError


def _closed_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]  # nothing listens once closed


def test_gs_path_without_network_fails_fast_with_one_line(monkeypatch):
  monkeypatch.setattr(input_checks, "GCS_ENDPOINT", ("127.0.0.1", _closed_port()))
  start = time.perf_counter()
  with pytest.raises(UserError, match=r"^--input_files=gs://bucket/data-\*: cannot reach Cloud "
                     r"Storage \(127\.0\.0\.1:\d+: .*\) within 5 s; check the network"):
    input_checks.check_reachable("gs://bucket/data-*", "input_files")
  assert time.perf_counter() - start < input_checks.GCS_CONNECT_TIMEOUT_S
  input_checks.check_reachable("/local/path", "input_files")  # only gs:// is probed


def test_a_directory_in_place_of_a_file_is_named(tmp_path):
  with pytest.raises(UserError, match=f"^--vocab_file={tmp_path}: is a directory; expected a "
                     "vocabulary file$"):
    input_checks.check_readable_file(str(tmp_path), "vocab_file", "vocabulary file")
  with pytest.raises(UserError, match=f"^--vocab_file={tmp_path}/v.txt: no such vocabulary file$"):
    input_checks.check_readable_file(str(tmp_path / "v.txt"), "vocab_file", "vocabulary file")
