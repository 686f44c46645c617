"""The base of every exported task: a tf.Module holding tokenizer, packer, model and metadata.

A subclass adds `serve` (raw strings in) and `serve_tokenized` (packed int32 ids in) and lists its
signatures; the SavedModel then needs only tensorflow and tensorflow_text. Every tf.function has
autograph=False: no Python branch depends on a tensor, and autograph's rewriting of every called
function made tracing (which tf.saved_model.save does twice) several times slower.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import tensorflow as tf

from bert_keras import kernels
from bert_keras.export.serving_options import ServingOptions
from bert_keras.kernels.host_tuning import AUTO_XLA_MAX_ROWS, default_head_groups
from bert_keras.lazy_cond import lazy_cond
from bert_keras.text import length_buckets as length_buckets_lib
from bert_keras.text.bert_packer import BertPacker

_INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def tokenized_specs(rank: int = 2) -> dict:
  """TensorSpecs of the packed model inputs, int32 (batch, seq) or (batch, choices, seq)."""
  return {name: tf.TensorSpec([None] * rank, tf.int32, name=name) for name in _INPUT_NAMES}


def model_caller(model) -> Callable:
  """packed inputs -> a dict of the model's outputs (a single output is named `logits`)."""

  def call(inputs: Mapping[str, tf.Tensor]):
    outputs = model({name: inputs[name] for name in _INPUT_NAMES}, training=False)
    return dict(outputs) if isinstance(outputs, Mapping) else {"logits": outputs}

  return call


def text_input(name: str) -> tf.TensorSpec:
  """A text input of `serve`: strings of any shape. A fixed signature converts Python strings before
  the trace lookup (else each new value retraced: seconds and ~19 MiB per call on MiniLM)."""
  return tf.TensorSpec(None, tf.string, name=name)


def single_or_batch(fn: Callable, texts: Mapping[str, tf.Tensor],
                    extra_axes: Mapping[str, int] | None = None) -> dict:
  """Runs the batched `fn` on one example (a scalar first text: outputs lose the batch axis) or a
  batch; the other texts have the first's shape plus `extra_axes[name]` axes."""
  extra_axes = extra_axes or {}
  names = list(texts)
  first = texts[names[0]]
  rank = tf.rank(first)
  ranks_ok = rank <= 1
  for name in names[1:]:
    ranks_ok &= tf.equal(tf.rank(texts[name]), rank + extra_axes.get(name, 0))
  wanted = ", ".join([f"{names[0]} a string or a 1-D batch of strings"] + [
      f"{name} with {extra_axes[name]} more axis" if extra_axes.get(name) else
      f"{name} of the same shape" for name in names[1:]])
  shapes = ", ".join(f"{name} {{}}" for name in names)
  check = tf.debugging.Assert(ranks_ok, [tf.strings.format(
      f"expected {wanted}; got shapes {shapes}", [tf.shape(texts[name]) for name in names])])
  with tf.control_dependencies([check]):
    batched = [tf.reshape(texts[name], [-1] + [tf.shape(texts[name])[axis] for axis in
                                               range(-extra_axes.get(name, 0), 0)])
               for name in names]
  outputs = fn(*same_rows(dict(zip(names, batched))))
  # (batch, ...) -> the first text's shape + (...): a scalar's batch of one loses its axis.
  return {name: tf.reshape(value, tf.concat([tf.shape(first), tf.shape(value)[1:]], 0))
          for name, value in outputs.items()}


def same_rows(texts: Mapping[str, tf.Tensor]) -> list:
  """The texts, once each has as many rows as the first: "text_a has 2 rows but text_b has 1"
  instead of a GatherV2 error deep in the packing."""
  names = list(texts)
  rows = [tf.shape(texts[name])[0] for name in names]
  checks = [tf.debugging.Assert(tf.equal(rows[0], count), [tf.strings.format(
      f"{names[0]} has {{}} rows but {name} has {{}}", (rows[0], count))])
            for name, count in zip(names[1:], rows[1:])]
  with tf.control_dependencies(checks):
    return [tf.identity(texts[name]) for name in names]


def batched_function(fn: Callable, *specs: tf.TensorSpec):
  """tf.function of `fn` over a fixed batched signature (its argument names name the inputs)."""
  return tf.function(fn, input_signature=list(specs), autograph=False)


def strings(*dims) -> tf.TensorSpec:
  """A string TensorSpec of shape dims (None = any size)."""
  return tf.TensorSpec(list(dims), tf.string)


class ServingCall(tf.Module):
  """`loaded.serve`: a callable child that keeps the export (its `owner`) alive while it runs: a
  restored tf.function holds its variables weakly, so `tf.saved_model.load(path).serve(x)` failed
  ("Called a function referencing variables which have been deleted")."""

  def __init__(self, owner: tf.Module, function: Callable):
    super().__init__(name="serve")
    self.owner = owner
    self.__call__ = function  # an instance attribute: saved as the function the loader calls

  def __call__(self, *args, **kwargs):  # in memory (Python looks __call__ up on the class)
    return self.__dict__["__call__"](*args, **kwargs)


class _Untracked:
  """A plain holder: tf.Module does not track what hides inside it."""

  def __init__(self, **values):
    self.__dict__.update(values)


class ServingModule(tf.Module):
  """Holds what every exported task needs; metadata readable after `tf.saved_model.load`: `task`,
  `kind`, `max_seq_length`, `lower_case`, `labels`, `length_buckets`, `vocab_file` (an Asset).
  Text-in calls pad to the bucket of their longest row; per-position outputs are as long as the
  call's bucket. `head_groups` > 1 saves the heads' kernel copies too (25 MB for MiniLM)."""

  def __init__(self, kind: str, model, tokenizer, max_seq_length: int,
               labels: Sequence[str] | None = None, task: str = "",
               options: ServingOptions = ServingOptions(), name: str | None = None):
    super().__init__(name=name)
    if max_seq_length < 3:
      raise ValueError(f"max_seq_length={max_seq_length} must be >= 3 ([CLS] x [SEP])")
    jit_compile, head_groups = options.jit_compile, options.head_groups
    self.buckets = length_buckets_lib.resolve_buckets(options.length_buckets, int(max_seq_length))
    self.kind_name = kind
    self.task_name = task
    # Keras objects stay untracked (saving them traces every layer, for nothing a loader uses);
    # the variables are tracked directly, as keras.export.ExportArchive does.
    self._keras = _Untracked(model=model, tokenizer=tokenizer, packer=BertPacker(
        max_seq_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id))
    self.model_variables = list(model.variables)
    self.seq_length = int(max_seq_length)
    self.label_list = list(labels or [])
    # Metadata as non-trainable variables: saved, restored, readable without this project.
    self.task = tf.Variable(task, trainable=False, name="task")
    self.kind = tf.Variable(kind, trainable=False, name="kind")
    self.max_seq_length = tf.Variable(self.seq_length, dtype=tf.int32, trainable=False,
                                      name="max_seq_length")
    self.lower_case = tf.Variable(bool(tokenizer.lower_case), trainable=False, name="lower_case")
    self.length_buckets = tf.Variable(self.buckets, dtype=tf.int32, trainable=False,
                                      name="length_buckets")
    self.labels = tf.Variable(tf.constant(self.label_list, dtype=tf.string, shape=[len(
        self.label_list)]), trainable=False, shape=tf.TensorShape([None]), name="labels")
    # Only the model is XLA-compiled: the tokenizer ops have no XLA kernels.
    if jit_compile not in (True, False, "auto"):
      raise ValueError(f"jit_compile={jit_compile!r}; expected True, False or 'auto'")
    self.jit_compile = jit_compile
    if head_groups is None:  # by the model's width (kernels/host_tuning.py)
      head_groups = default_head_groups(kernels.hidden_size(model))
    if int(head_groups) != head_groups or head_groups < 1:
      raise ValueError(f"head_groups={head_groups!r}; expected an integer >= 1")
    self.head_groups = int(head_groups)
    # Head groups only for the plain graph: they give its inter-op pool independent branches,
    # while XLA's CPU code runs one op after the other.
    implementation = options.implementation or kernels.default_implementation()
    self.implementation = implementation
    model_fn = lambda jit: tf.function(
        model_caller(kernels.implementation_of(model, implementation))
        if jit else self._plain_graph_caller(model),
        jit_compile=jit, reduce_retracing=True, autograph=False)
    if jit_compile == "auto":
      self._graph_model, self._xla_model = model_fn(False), model_fn(True)
      self._run_model = self._run_model_auto
    else:
      self._run_model = model_fn(bool(jit_compile))
      self._graph_model = None if jit_compile else self._run_model
    # `_per_row_bucket`, traced on first use; untracked: kinds that never call it do not trace it.
    self._shared = _Untracked(per_row_bucket=None)
    # One traced tokenizer for every signature: its tables are stored once in the SavedModel.
    # string (batch,) -> int32 ragged (batch, (pieces)); with offsets, begin and end bytes int64.
    strings = [tf.TensorSpec([None], tf.string)]
    self.tokenize = tf.function(lambda text: tf.cast(tokenizer.tokenize(text), tf.int32),
                                input_signature=strings, autograph=False)
    self.tokenize_with_offsets = tf.function(
        lambda text: [tf.cast(ids, dtype) for ids, dtype in zip(
            tokenizer.tokenize_with_offsets(text), (tf.int32, tf.int64, tf.int64))],
        input_signature=strings, autograph=False)
    # `serve`, the subclass's text-in entry point, as a callable child (see ServingCall).
    self.serve = ServingCall(self, self._serve)

  tokenized_rank = 2  # of the packed ids: (batch, seq); multiple choice (batch, choices, seq)
  model = property(lambda self: self._keras.model)
  tokenizer = property(lambda self: self._keras.tokenizer)
  packer = property(lambda self: self._keras.packer)

  def _plain_graph_caller(self, model) -> Callable:
    """The plain graph's caller; the head groups' kernel copies are tracked (saved)."""
    if self.implementation != "cpu" or self.head_groups == 1:
      return model_caller(kernels.implementation_of(model, self.implementation))
    by_heads = kernels.implementation_of(model, self.implementation, head_groups=self.head_groups)
    own = {id(v) for v in model.variables}
    self.head_group_weights = [v for v in by_heads.variables if id(v) not in own]
    return model_caller(by_heads)

  def _run_model_auto(self, inputs: Mapping[str, tf.Tensor]):
    """The XLA-compiled model for up to AUTO_XLA_MAX_ROWS rows, the plain graph above that. On 2
    CPU cores XLA took about 12% less CPU on one sequence (BERT-mini, length 128) but 17% more at
    32 rows, where oneDNN matmuls win (bench/bench_serving.py)."""
    rows = tf.shape(inputs["input_word_ids"])[0]
    return lazy_cond(rows <= AUTO_XLA_MAX_ROWS, lambda: self._xla_model(inputs),
                     lambda: self._graph_model(inputs))

  def run_model_per_row_bucket(self, inputs: Mapping[str, tf.Tensor]) -> dict:
    """The model's outputs on packed (rows, seq) inputs, each row at its own bucket (32 sentences
    of 5-65 pieces: 2048 positions at 64, ~1200 at their own), per-position outputs zero-padded to
    the call's length. Under XLA (a program per group size), one row or one bucket: one call."""
    if self._graph_model is None or len(self.buckets) == 1:
      return self._run_model(inputs)
    rows = tf.shape(inputs["input_word_ids"])[0]
    return lazy_cond(rows > 1, lambda: self._per_row_bucket()(
        {name: inputs[name] for name in _INPUT_NAMES}), lambda: self._run_model(inputs))

  def _per_row_bucket(self) -> Callable:
    """`_run_by_bucket` traced once for all signatures (per signature it was most of an export)."""
    if self._shared.per_row_bucket is None:
      with tf.init_scope():  # outside the caller's graph: one trace, whichever signature asks
        self._shared.per_row_bucket = tf.function(
            self._run_by_bucket, autograph=False).get_concrete_function(tokenized_specs())
    return self._shared.per_row_bucket

  def _run_by_bucket(self, inputs: Mapping[str, tf.Tensor]) -> dict:
    inputs = dict(inputs)
    width = tf.shape(inputs["input_word_ids"])[1]  # the call's bucket
    lengths = tf.reduce_sum(tf.cast(inputs["input_mask"], tf.int32), axis=-1)  # (rows,)
    row_bucket = length_buckets_lib.bucket_length(lengths, self.buckets)  # (rows,)
    # The model's output structure at unknown length: its unknown axes after the first are the
    # per-position ones, zero-padded to the call's width below.
    spec = {name: tf.TensorSpec([None, None], value.dtype) for name, value in inputs.items()}
    model = self._graph_model.get_concrete_function(spec)  # one trace for every bucket
    outputs_spec = model.structured_outputs
    per_position = lambda t: [axis for axis in range(1, t.shape.rank) if t.shape[axis] is None]

    def padded(t: tf.Tensor, reference) -> tf.Tensor:
      paddings = [[0, 0]] * reference.shape.rank
      for axis in per_position(reference):
        paddings[axis] = [0, width - tf.shape(t)[axis]]
      return tf.pad(t, paddings)

    def empty(reference) -> tf.Tensor:
      shape = [0] + [width if reference.shape[axis] is None else reference.shape[axis]
                     for axis in range(1, reference.shape.rank)]
      return tf.zeros(tf.stack(shape), reference.dtype)

    order, groups = [], []
    for bucket in self.buckets:
      members = tf.cast(tf.where(tf.equal(row_bucket, bucket))[:, 0], tf.int32)
      order.append(members)

      def run(members=members, bucket=bucket):
        group = {name: tf.gather(value, members)[:, :bucket] for name, value in inputs.items()}
        outputs = model(group)
        return tf.nest.map_structure(padded, outputs, outputs_spec)

      groups.append(lazy_cond(tf.size(members) > 0, run,
                              lambda: tf.nest.map_structure(empty, outputs_spec)))
    back = tf.math.invert_permutation(tf.concat(order, axis=0))  # rows' positions in the groups
    return tf.nest.map_structure(lambda *parts: tf.gather(tf.concat(parts, axis=0), back),
                                 *groups)

  def to_bucket(self, inputs: Mapping[str, tf.Tensor]) -> dict:
    """Packed inputs (..., max_seq_length) cut to the bucket of their longest row."""
    return length_buckets_lib.trim_to_bucket(dict(inputs), self.buckets)

  @tf.function(autograph=False)
  def serve_tokenized(self, input_word_ids, input_mask, input_type_ids):
    """Packed ids of any length up to max_seq_length (longer ones fail clearly) -> `_outputs`."""
    length = tf.shape(input_word_ids)[-1]
    check = tf.debugging.Assert(
        length <= self.seq_length,
        [tf.strings.format("input length {} exceeds max_seq_length={}",
                           (length, self.seq_length))])
    with tf.control_dependencies([check]):
      inputs = {name: tf.identity(value) for name, value in (
          ("input_word_ids", input_word_ids), ("input_mask", input_mask),
          ("input_type_ids", input_type_ids))}
    return self._outputs(inputs)

  def _outputs(self, inputs) -> dict:
    """Packed inputs (dict of int32 (batch, ..., seq)) -> the outputs of `serving_tokenized`."""
    raise NotImplementedError

  def signatures(self) -> dict:
    """name -> concrete function: the text-in `serving_default` and `serving_tokenized`."""
    return {"serving_default": self._serve_text.get_concrete_function(),
            "serving_tokenized": self.serve_tokenized.get_concrete_function(
                **tokenized_specs(rank=self.tokenized_rank))}

  def metadata(self) -> dict:
    """JSON-able description written beside the SavedModel (assets.extra/export_info.json)."""
    return {"task": self.task.numpy().decode(), "kind": self.kind_name,
            "max_seq_length": self.seq_length, "lower_case": bool(self.lower_case.numpy()),
            "labels": self.label_list, "head_groups": self.head_groups,
            "length_buckets": list(self.buckets)}
