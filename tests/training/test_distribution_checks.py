"""get_strategy answers a TPU address nobody serves and a GPU that is not there with a UserError in
seconds, instead of hanging in connect_to_cluster or silently training on the CPU."""

import socket
import time

import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.training import distribute
from tests.reliability import bad_inputs as B


def _closed_port() -> int:
  """A local port nobody listens on (bound, then released)."""
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def test_unreachable_grpc_tpu_address_is_an_error_not_a_hang(tmp_path):
  """The user's view, in a subprocess: a hang (connect_to_cluster waits forever) fails the test at
  the timeout instead of blocking the suite."""
  address = f"grpc://127.0.0.1:{_closed_port()}"
  start = time.monotonic()
  result = B.run_script("run_pretraining", "--distribution_strategy=tpu", f"--tpu={address}",
                        "--model=bert_tiny", f"--input_files={tmp_path / 'none-*'}",
                        f"--output_dir={tmp_path / 'run'}", timeout=120)
  B.user_error_line(result, f"--tpu={address}: the TPU address cannot be reached")
  assert time.monotonic() - start < 100


def test_grpc_tpu_address_that_never_answers_times_out(monkeypatch):
  # A listening socket whose backlog is full does not complete new handshakes on Linux, like a host
  # that drops the packets: the check must give up after its timeout.
  monkeypatch.setattr(distribute, "TPU_CONNECT_TIMEOUT_SEC", 0.5)
  with socket.socket() as server:
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):  # fill the backlog (never accepted)
      c = socket.socket()
      c.setblocking(False)
      c.connect_ex(("127.0.0.1", port))
      fillers.append(c)
    try:
      start = time.monotonic()
      with pytest.raises(UserError, match=f"127.0.0.1:{port}"):
        distribute.check_tpu_reachable(f"grpc://127.0.0.1:{port}")
      assert time.monotonic() - start < 5
    finally:
      for c in fillers:
        c.close()


def test_reachable_grpc_address_passes_the_check():
  with socket.socket() as server:
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    distribute.check_tpu_reachable(f"grpc://127.0.0.1:{server.getsockname()[1]}")
  distribute.check_tpu_reachable("my-cloud-tpu")  # a Cloud TPU name: TensorFlow resolves it


@pytest.mark.parametrize("address", ["grpc://nohost", "grpc://host:port", "grpc://:8470"])
def test_malformed_grpc_tpu_address_is_named(address):
  with pytest.raises(UserError, match="expected grpc://host:port"):
    distribute.check_tpu_reachable(address)


@pytest.mark.skipif(bool(tf.config.list_logical_devices("GPU")), reason="a GPU is visible")
def test_one_device_with_a_gpu_requested_and_none_visible():
  with pytest.raises(UserError, match="num_gpus=1 .*no GPU is visible"):
    distribute.get_strategy("one_device", num_gpus=1)
  assert distribute.get_strategy("one_device", num_gpus=0) is not None


def test_tpu_name_off_google_cloud_is_an_error_naming_the_fix(tmp_path, monkeypatch):
  """A Cloud TPU name resolves through the GCE metadata server; off Google Cloud the lookup died
  with a urllib URLError traceback. The server is pointed at a closed local port (what any host off
  Google Cloud answers), so the test does not depend on where it runs."""
  monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{_closed_port()}")
  start = time.monotonic()
  result = B.run_script("run_pretraining", "--distribution_strategy=tpu", "--tpu=my-tpu",
                        "--model=bert_tiny", f"--input_files={tmp_path / 'none-*'}",
                        f"--output_dir={tmp_path / 'run'}", timeout=120)
  B.user_error_line(result, "--tpu=my-tpu: a Cloud TPU name, which resolves only on Google Cloud",
                    "elsewhere pass the TPU's address, --tpu=grpc://host:port")
  assert time.monotonic() - start < 100
  assert not (tmp_path / "run").exists()


def test_tpu_name_with_a_metadata_server_that_never_answers_times_out(monkeypatch):
  monkeypatch.setattr(distribute, "TPU_CONNECT_TIMEOUT_SEC", 0.5)
  with socket.socket() as server:
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(4):  # fill the backlog (never accepted): connections to it hang
      c = socket.socket()
      c.setblocking(False)
      c.connect_ex(("127.0.0.1", port))
      fillers.append(c)
    monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{port}")
    try:
      start = time.monotonic()
      with pytest.raises(UserError, match=r"--tpu=my-tpu: .*only on Google Cloud .*127\.0\.0\.1"):
        distribute.get_strategy("tpu", tpu="my-tpu")
      assert time.monotonic() - start < 5
    finally:
      for c in fillers:
        c.close()
