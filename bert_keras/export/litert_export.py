"""Writes a task model as one `.tflite` file that LiteRT runs without TensorFlow.

The file holds the model from packed ids to its outputs (every weight a constant) and, as
flatbuffer metadata, the vocabulary and a JSON description the text-in runtime
(`bert_keras.serving.litert`, which tokenizes outside the file: LiteRT has no kernels for the
in-graph tokenizer) needs: task, kind, labels, casing, length buckets, settings, output order.

Measured on the real MiniLM, 2 shared cores (docs/benchmarks.md, "LiteRT export beside the
SavedModel"): fp32 within 1e-5 of the SavedModel (real positions) and less CPU on short sentences
(10.1-11.0 against 16.1 ms); dynamic-range int8 2.2-3.3x less CPU at batch 1, its dev drop measured
by bench/litert_dev_metrics.py (polarity accuracy 67.5 -> 65.0, one of 40; Lee Pearson 46.44 -> 46.20).
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Mapping, Sequence

import tensorflow as tf

from bert_keras import kernels
from bert_keras.atomic_io import gfile_write_text
from bert_keras.errors import UserError
from bert_keras.export.serving_module import model_caller, tokenized_specs
from bert_keras.text import length_buckets as length_buckets_lib

FORMAT = "bert_keras.litert/1"  # the `format` of the JSON metadata
INFO_NAME = "bert_keras_info"  # flatbuffer metadata entries (read by bert_keras/serving/litert.py)
VOCAB_NAME = "bert_keras_vocab"
LITERT_KINDS = ("encoder", "classification", "regression", "multiple_choice", "tagging", "squad")
QUANTIZE = ("none", "int8")
LITERT_FILE = "model.tflite"  # in export_model.py's --output_dir, beside or instead of the SavedModel


def _model_function(task_model, kind: str):
  """tf.function: packed int32 ids (batch, seq), or (batch, choices, seq) for multiple choice ->
  the model's float32 outputs, each at any batch and length (LiteRT resizes per call). The graph is
  the CPU implementation the SavedModel runs on CPU (bert_keras/kernels), unsplit (XNNPACK spreads
  each op over the threads); classifiers and multiple choice run the last block at [CLS] only.
  MiniLM, 2 threads, CPU per call against the reference graph (bench/profile_litert.py), fp32 /
  int8: classifier 0.86x / 0.74x on short sentences, 0.86x / 0.82x on 128-piece documents,
  0.85x / 0.80x on mixed batches of 32; encoder 0.92x / 0.85x, 0.99x / 0.92x, 0.94x / 0.94x.
  """
  call = model_caller(kernels.implementation_of(task_model, "cpu"))

  def outputs(inputs):
    result = call(inputs)
    if kind == "encoder":
      result = {"pooled_output": result["pooled_output"],
                "sequence_output": result["sequence_output"],
                "encoder_outputs": tf.stack(result["encoder_outputs"], axis=1)}  # (b, L, seq, H)
    return {name: tf.cast(value, tf.float32) for name, value in result.items()}

  specs = tokenized_specs(rank=3 if kind == "multiple_choice" else 2)
  return tf.function(outputs, input_signature=[specs], autograph=False)


def convert(task_model, kind: str, quantize: str = "none") -> tuple[bytes, list[str]]:
  """The model's .tflite bytes and the names of its outputs in the file's order. Variables are
  frozen first: the converter keeps Keras 3 variables as resource variables otherwise, which a
  fresh interpreter reads uninitialised. "int8": dynamic-range quantisation."""
  from tensorflow.python.framework.convert_to_constants import (  # pylint: disable=g-import-not-at-top
      convert_variables_to_constants_v2)

  if quantize not in QUANTIZE:
    raise UserError(f"quantize={quantize!r}; expected one of {list(QUANTIZE)}")
  function = _model_function(task_model, kind).get_concrete_function()
  frozen = convert_variables_to_constants_v2(function)
  converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen], tf.Module())
  if quantize == "int8":
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
  # The signature's outputs are output_0, output_1, ... in the flattened (sorted) dict order.
  return converter.convert(), sorted(function.structured_outputs)


def _with_metadata(model: bytes, entries: Mapping[str, bytes]) -> bytes:
  """`model` with each entry stored as a named flatbuffer metadata buffer."""
  from tensorflow.lite.tools import flatbuffer_utils  # pylint: disable=g-import-not-at-top
  from tensorflow.lite.python import schema_py_generated as schema  # pylint: disable=g-import-not-at-top

  flat = flatbuffer_utils.convert_bytearray_to_object(bytearray(model))
  flat.metadata = list(flat.metadata or [])
  for name, data in entries.items():
    buffer = schema.BufferT()
    buffer.data = bytearray(data)
    flat.buffers.append(buffer)
    entry = schema.MetadataT()
    entry.name = name
    entry.buffer = len(flat.buffers) - 1
    flat.metadata.append(entry)
  return bytes(flatbuffer_utils.convert_object_to_bytearray(flat))


def export_litert(task_model, kind: str, tokenizer, path: str, max_seq_length: int,
                  labels: Sequence[str] | None = None, task: str = "",
                  extra: Mapping | None = None, length_buckets=None,
                  quantize: str = "none") -> str:
  """Writes `task_model` for `kind` as one .tflite file at path (atomically); returns path.
  Arguments as export_task_model's (kinds: LITERT_KINDS); quantize: "none" or "int8"."""
  data = litert_model(task_model, kind, tokenizer, max_seq_length, labels, task, extra,
                      length_buckets, quantize)
  tf.io.gfile.makedirs(os.path.dirname(path) or ".")
  gfile_write_text(path, data)
  return path


def litert_model(task_model, kind: str, tokenizer, max_seq_length: int,
                 labels: Sequence[str] | None = None, task: str = "",
                 extra: Mapping | None = None, length_buckets=None,
                 quantize: str = "none") -> bytes:
  """export_litert's .tflite file, as bytes."""
  check_kind(kind)
  if kind in ("classification", "tagging") and not labels:
    raise UserError(f"a {kind} export needs its label names (labels=[...])")
  extra = dict(extra or {})
  settings = {}
  if kind == "tagging":  # TaggerServing's decoding, as data for the runtime
    from bert_keras.export.tagger_serving import parse_tags  # pylint: disable=g-import-not-at-top
    prefixes, type_ids, types = parse_tags(labels)
    if not types:
      raise UserError(f"labels={list(labels)} hold no B-/I- entity tags")
    doc_stride = int(extra.get("doc_stride", 0))
    if not 0 <= doc_stride <= int(max_seq_length) - 2:
      raise UserError(f"doc_stride={doc_stride} must be in [0, max_seq_length - 2]")
    settings = {"doc_stride": doc_stride, "tag_prefix": prefixes, "tag_type": type_ids,
                "entity_types": types}
  if kind == "squad":  # SpanServing's settings and defaults
    from bert_keras.export.span_serving import SETTINGS, SpanServing  # pylint: disable=g-import-not-at-top
    defaults = {name: p.default for name, p in inspect.signature(SpanServing).parameters.items()
                if name in SETTINGS}
    settings = {name: type(default)(extra.get(name, default))
                for name, default in defaults.items()}
  model, outputs = convert(task_model, kind, quantize)
  info = {"format": FORMAT, "task": task or kind, "kind": kind,
          "max_seq_length": int(max_seq_length), "lower_case": bool(tokenizer.lower_case),
          "labels": list(labels or []) if kind in ("classification", "tagging") else [],
          "length_buckets": list(length_buckets_lib.resolve_buckets(length_buckets,
                                                                    int(max_seq_length))),
          "pair": bool(extra.get("pair", False)), "quantize": quantize, "outputs": outputs,
          **settings}
  vocab = "\n".join(tokenizer.vocabulary) + "\n"
  return _with_metadata(model, {INFO_NAME: json.dumps(info, ensure_ascii=False).encode("utf-8"),
                                VOCAB_NAME: vocab.encode("utf-8")})


def check_kind(kind: str) -> None:
  """UserError for a kind with no LiteRT export (GPT-1's), before anything is written."""
  if kind not in LITERT_KINDS:
    raise UserError(f"export kind={kind!r} has no LiteRT export; expected one of "
                    f"{list(LITERT_KINDS)} (export a SavedModel instead: --format=saved_model)")
