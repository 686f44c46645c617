"""Picks the tf.distribute strategy by name, so one training code path serves every setup."""

from __future__ import annotations

import os
import socket

import tensorflow as tf

from bert_keras.configs.training import DISTRIBUTIONS
from bert_keras.errors import UserError
from bert_keras.json_io import parse_json

# Seconds a grpc:// TPU address has to accept a TCP connection before the run gives up.
TPU_CONNECT_TIMEOUT_SEC = 10.0


def get_strategy(name: str = "default", tpu: str | None = None,
                 num_gpus: int = 0) -> tf.distribute.Strategy:
  """default, one_device (/gpu:0 with num_gpus > 0, else /cpu:0), mirrored (`num_gpus` local GPUs,
  0: all, else the CPU), multi_worker_mirrored (TF_CONFIG) or tpu (grpc://host:port or a Cloud TPU
  name; one that does not answer is an error, not a hang)."""
  if name == "default":
    return tf.distribute.get_strategy()
  if name == "one_device":
    if num_gpus > 0 and not tf.config.list_logical_devices("GPU"):
      raise UserError(f"num_gpus={num_gpus} with distribution 'one_device' but no GPU is visible; "
                      "expected --num_gpus=0 to run on the CPU")
    return tf.distribute.OneDeviceStrategy("/gpu:0" if num_gpus > 0 else "/cpu:0")
  if name == "mirrored":
    gpus = tf.config.list_logical_devices("GPU")
    if num_gpus > len(gpus):
      raise UserError(f"num_gpus={num_gpus} but only {len(gpus)} GPU(s) are visible")
    devices = [d.name for d in gpus[:num_gpus or len(gpus)]] or ["/cpu:0"]
    return tf.distribute.MirroredStrategy(devices)
  if name == "multi_worker_mirrored":
    _check_tf_config()
    return tf.distribute.MultiWorkerMirroredStrategy()
  if name == "tpu":
    if not tpu:
      raise UserError("distribution 'tpu' needs a TPU address (--tpu=grpc://host:port or a name)")
    check_tpu_reachable(tpu)
    resolver = _tpu_cluster_resolver(tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
  raise UserError(f"distribution={name!r}; expected one of {DISTRIBUTIONS}")


def check_tpu_reachable(tpu: str, timeout: float | None = None) -> None:
  """UserError unless a grpc://host:port address accepts a TCP connection within `timeout` s
  (TensorFlow's connect_to_cluster waits forever)."""
  if not tpu.startswith("grpc://"):
    return
  timeout = TPU_CONNECT_TIMEOUT_SEC if timeout is None else timeout
  address = tpu[len("grpc://"):].rstrip("/")
  host, sep, port = address.rpartition(":")
  host = host.strip("[]")  # [::1]:8470
  if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
    raise UserError(f"--tpu={tpu}: expected grpc://host:port")
  try:
    with socket.create_connection((host, int(port)), timeout=timeout):
      pass
  except OSError as e:
    raise UserError(f"--tpu={tpu}: the TPU address cannot be reached within {timeout:g} s "
                    f"({e.strerror or e}); check the address and that the TPU is up") from None


def _metadata_server() -> tuple[str, int]:
  """(host, port) of the GCE metadata server, as TensorFlow's Cloud TPU client finds it."""
  endpoint = (os.environ.get("GCE_METADATA_HOST") or os.environ.get("GCE_METADATA_IP") or
              "metadata.google.internal")
  host, sep, port = endpoint.rpartition(":")
  if sep and port.isdigit() and host:
    return host.strip("[]"), int(port)
  return endpoint, 80


def _tpu_cluster_resolver(tpu: str) -> tf.distribute.cluster_resolver.TPUClusterResolver:
  """TPUClusterResolver(tpu); a Cloud TPU name needs the GCE metadata server (only on Google
  Cloud; elsewhere a URLError traceback or a hang), which is first given a few seconds to answer."""
  if tpu.startswith("grpc://") or tpu == "local":
    return tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
  host, port = _metadata_server()

  def refused(reason: str) -> UserError:
    return UserError(f"--tpu={tpu}: a Cloud TPU name, which resolves only on Google Cloud "
                     f"(TensorFlow looks it up through the metadata server {host}:{port}: "
                     f"{reason}); elsewhere pass the TPU's address, --tpu=grpc://host:port")

  try:
    with socket.create_connection((host, port), timeout=TPU_CONNECT_TIMEOUT_SEC):
      pass
  except OSError as e:
    raise refused(f"not reachable within {TPU_CONNECT_TIMEOUT_SEC:g} s, "
                  f"{e.strerror or e}") from None
  try:
    return tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
  except OSError as e:  # urllib.error.URLError / HTTPError of the metadata lookup
    raise refused(f"{type(e).__name__}: {getattr(e, 'reason', None) or e}") from None


def _check_tf_config() -> None:
  raw = os.environ.get("TF_CONFIG", "")
  if not raw:
    return  # a single worker; MultiWorkerMirroredStrategy then behaves like local mirroring
  value = parse_json(raw, "TF_CONFIG")
  if not isinstance(value, dict) or "cluster" not in value or "task" not in value:
    raise UserError(f"TF_CONFIG needs 'cluster' and 'task' keys, got {raw!r}")


def is_chief(strategy: tf.distribute.Strategy) -> bool:
  """True on the one worker that writes summaries, exports and the real checkpoints."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or not resolver.task_type:
    return True
  if resolver.task_type == "chief":
    return True
  cluster = resolver.cluster_spec().as_dict()
  return resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in cluster


def task_id(strategy: tf.distribute.Strategy) -> int:
  resolver = getattr(strategy, "cluster_resolver", None)
  return int(resolver.task_id or 0) if resolver is not None and resolver.task_type else 0
