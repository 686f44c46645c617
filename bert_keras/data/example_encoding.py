"""tf.train.Example and TFRecord bytes in plain Python, so a data worker need not import TensorFlow:
the Example wire format as `SerializeToString(deterministic=True)` writes it, and TFRecord framing
(length, masked crc32c, data, masked crc32c). tests/data/test_example_encoding.py holds both
byte-equal to TensorFlow's writers.
"""

from __future__ import annotations

import functools
import struct
from typing import Dict, Iterable, List, Sequence, Tuple

_MASK64 = (1 << 64) - 1


def _varint(value: int) -> bytes:
  value &= _MASK64  # negative int64 values take ten bytes, as in protobuf
  out = bytearray()
  while value >= 0x80:
    out.append((value & 0x7F) | 0x80)
    value >>= 7
  out.append(value)
  return bytes(out)


# Varints of the values below 2**16 (ids, masks, positions): one lookup each.
_SMALL_VARINTS = ([bytes((v,)) for v in range(1 << 7)]
                  + [bytes((v & 0x7F | 0x80, v >> 7)) for v in range(1 << 7, 1 << 14)]
                  + [bytes((v & 0x7F | 0x80, v >> 7 & 0x7F | 0x80, v >> 14)) for v in range(1 << 14, 1 << 16)])


def _length(n: int) -> bytes:
  return _SMALL_VARINTS[n] if n < 65536 else _varint(n)


def pack_varints(values: Sequence[int]) -> bytes:
  try:
    low, high = min(values), max(values)
  except (TypeError, ValueError):  # empty, or not plain ints
    return b"".join([_varint(int(v)) for v in values])
  if low >= 0 and high < 128:
    return bytes(values)  # one byte each: masks, segment ids, labels, short positions
  if low >= 0 and high < 65536:
    table = _SMALL_VARINTS  # (a negative index would silently read the table from its end)
    return b"".join([table[v] for v in values])
  return b"".join([_varint(int(v)) for v in values])


@functools.lru_cache(maxsize=64)
def _feature_layout(names: Tuple[str, ...]) -> List[Tuple[str, bytes]]:
  layout = []
  # upb's deterministic map order: bytewise, but a key after the longer keys it prefixes.
  for name in sorted(names, key=lambda name: tuple(name.encode("utf-8")) + (256,)):
    key = name.encode("utf-8")
    layout.append((name, b"\x0a" + _length(len(key)) + key))
  return layout


def encode_packed_example(fields: Dict[str, Tuple[bytes, bytes, int]]) -> bytes:
  """{name: (INT64_LIST or FLOAT_LIST, values in wire format, number of values)} -> serialized
  tf.train.Example."""
  entries = []
  for name, key_field in _feature_layout(tuple(fields)):
    list_field, packed, count = fields[name]
    # repeated value = 1, packed; an empty list leaves the (present) list message empty
    value_list = b"\x0a" + _length(len(packed)) + packed if count else b""
    feature = list_field + _length(len(value_list)) + value_list
    entry = key_field + b"\x12" + _length(len(feature)) + feature
    entries.append(b"\x0a" + _length(len(entry)) + entry)  # Features.feature (map) = 1
  if not entries:
    return b""  # an Example with no features: the features message is not even present
  body = b"".join(entries)
  return b"\x0a" + _length(len(body)) + body  # Example.features = 1


INT64_LIST = b"\x1a"  # Feature.int64_list = 3
FLOAT_LIST = b"\x12"  # Feature.float_list = 2


try:
  from google_crc32c import value as _CRC32C
except ImportError:
  _CRC32C = None


def have_fast_crc32c() -> bool:
  """Whether google-crc32c is installed; otherwise callers use TensorFlow."""
  return _CRC32C is not None


def _masked_crc32c(data: bytes) -> int:
  crc = _CRC32C(data)
  return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def write_uncompressed_tfrecords(f, records: Iterable[bytes]) -> None:
  for record in records:
    length = struct.pack("<Q", len(record))
    f.write(b"".join([length, struct.pack("<I", _masked_crc32c(length)), record,
                      struct.pack("<I", _masked_crc32c(record))]))
