"""The base of every exported task: a tf.Module holding tokenizer, packer, model and metadata.

A subclass adds the task's `serve` (raw strings in, answers out) and `serve_tokenized` (packed int32
ids in) tf.functions and lists its signatures. `tf.saved_model.save` then writes one SavedModel that
needs only tensorflow and tensorflow_text to load and run: the Keras layers are traced into plain
TensorFlow graphs, the WordPiece tables into tf_text ops and constants.

Every tf.function here has autograph=False: no Python branch depends on a tensor value, and
autograph's source rewriting of every called function (Keras, tensorflow_text) made tracing, which
tf.saved_model.save does twice, several times slower.
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


def text_input(name: str) -> tf.TensorSpec:
  """The input_signature entry of a text input of `serve`: strings of any shape.

  One fixed signature makes tf.function convert Python strings and lists to tensors before it
  looks up its trace, so `loaded.serve(["a new text"])` runs the saved graph. Without one, each
  new Python value was a new trace of the loaded function: seconds and about 19 MiB per call on
  MiniLM (tf.constant inputs took 0.02 s). The shapes are checked in the graph (single_or_batch).
  """
  return tf.TensorSpec(None, tf.string, name=name)


def single_or_batch(fn: Callable, texts: Mapping[str, tf.Tensor],
                    extra_axes: Mapping[str, int] | None = None) -> dict:
  """Runs the batched `fn` on one example or a batch, read from the first text's rank at run time.

  texts: name -> string tensor of unknown shape (`text_input`), in `fn`'s argument order. The
  first is a scalar (one example) or (batch,); each other has the same shape plus
  `extra_axes[name]` axes (default 0; multiple-choice endings: 1). A scalar example runs as a
  batch of one and its outputs lose the batch axis. Any other shape, or batches of different
  sizes, fail with an InvalidArgumentError naming the inputs. `fn` is a tf.function with a
  batched input_signature: every form calls the same traced graph.
  """
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
  """The texts, once each is known to have as many rows as the first: a clear
  InvalidArgumentError "text_a has 2 rows but text_b has 1" instead of a GatherV2 error deep in
  the packing. Costs a scalar comparison and a short string format per call and input."""
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
  """`loaded.serve`: a callable child of the export that keeps the export alive while it runs.

  A restored tf.function holds the variables it reads only weakly (FuncGraph.variables), so when
  `serve` was a function attribute of the export, `tf.saved_model.load(path).serve(x)` dropped the
  last reference to the loaded export, and with it the variables, before the call ran: "Called a
  function referencing variables which have been deleted". tf.saved_model.load makes an object
  whose saved attribute `__call__` is a function callable, and restores its other attributes: this
  child saves `function` as its `__call__` and the export as its `owner`, so the export lives at
  least as long as a call through `loaded.serve` does.
  """

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
  """Holds what every exported task needs and the metadata stored as SavedModel attributes.

  Attributes readable after `tf.saved_model.load`: `task`, `kind` (string scalars),
  `max_seq_length` (int32), `lower_case` (bool), `labels` (string (K,), empty when the task has
  none), `length_buckets` (int32 (B,)), `vocab_file` (an Asset:
  `loaded.vocab_file.asset_path`), plus the subclass's settings.

  Text-in signatures pad each call to its longest packed row rounded up to one of
  `length_buckets` (bert_keras/text/length_buckets.py; default 16, 24, 32, 48, 64, ... up to
  max_seq_length), not to max_seq_length: a short sentence runs the Transformer at 16, 24 or
  32 positions. In a batch, the encoder, classifier and tagger run each row at its own bucket
  (`run_model_per_row_bucket`); SQuAD windows and multiple-choice endings run together at the
  call's bucket. Per-position outputs (sequence_output, span logits, tags) are as long as the
  call's bucket; on the real tokens they equal those of fixed padding. length_buckets="fixed" pads every
  call to max_seq_length (one shape, what a TPU server wants). With jit_compile, XLA compiles one
  program per bucket length (and batch size) on its first call.

  The plain graph of the CPU implementation runs every Transformer block as `head_groups` groups
  of heads side by side (default by the model's width, kernels/host_tuning.py); the SavedModel
  then also holds the copies of the kernel columns each group reads (`head_group_weights`, 25 MB
  for MiniLM), taken from the model when the module is built.
  """

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
    # The Keras objects stay out of the SavedModel's object graph (saving them makes
    # tf.saved_model walk and trace every layer, for nothing a loader could use); the variables
    # are tracked directly, as keras.export.ExportArchive does, and the traced functions use them.
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
    # Model-only part, optionally XLA-compiled: the tokenizer ops have no XLA kernels, so only the
    # Transformer is compiled and the string work stays outside.
    if jit_compile not in (True, False, "auto"):
      raise ValueError(f"jit_compile={jit_compile!r}; expected True, False or 'auto'")
    self.jit_compile = jit_compile
    if head_groups is None:  # by the model's width (kernels/host_tuning.py)
      head_groups = default_head_groups(kernels.hidden_size(model))
    if int(head_groups) != head_groups or head_groups < 1:
      raise ValueError(f"head_groups={head_groups!r}; expected an integer >= 1")
    self.head_groups = int(head_groups)
    # The traced graphs run `implementation` (bert_keras/kernels/__init__.py; None = "cpu" on a
    # host without GPU or TPU), on the model's own variables. Head groups only for the plain
    # graph: they give its inter-op pool independent branches, while XLA's CPU code runs one op
    # after the other (the split only adds ops there).
    implementation = options.implementation or kernels.default_implementation()
    self.implementation = implementation
    model_fn = lambda jit: tf.function(
        self._model_caller(kernels.implementation_of(model, implementation))
        if jit else self._plain_graph_caller(model),
        jit_compile=jit, reduce_retracing=True, autograph=False)
    if jit_compile == "auto":
      self._graph_model, self._xla_model = model_fn(False), model_fn(True)
      self._run_model = self._run_model_auto
    else:
      self._run_model = model_fn(bool(jit_compile))
      self._graph_model = None if jit_compile else self._run_model
    # The batches of every text-in and tokenized signature run through one traced function
    # (`_per_row_bucket`), made on first use; untracked, so saving does not trace it for the kinds
    # that never call it.
    self._shared = _Untracked(per_row_bucket=None)
    # One traced tokenizer shared by every signature: its normalisation tables and WordPiece model
    # are graph constants, stored once in the SavedModel instead of once per concrete function.
    strings = [tf.TensorSpec([None], tf.string)]
    self._tokenize = tf.function(lambda text: tf.cast(tokenizer.tokenize(text), tf.int32),
                                 input_signature=strings, autograph=False)
    self._tokenize_with_offsets = tf.function(
        lambda text: tokenizer.tokenize_with_offsets(text), input_signature=strings,
        autograph=False)
    # `serve`, the subclass's text-in entry point, as a callable child (see ServingCall).
    self.serve = ServingCall(self, self._serve)

  model = property(lambda self: self._keras.model)
  tokenizer = property(lambda self: self._keras.tokenizer)
  packer = property(lambda self: self._keras.packer)

  @staticmethod
  def _model_caller(model) -> Callable:
    """packed inputs -> a dict of the model's outputs (a single output is named `logits`)."""

    def call(inputs: Mapping[str, tf.Tensor]):
      outputs = model({name: inputs[name] for name in _INPUT_NAMES}, training=False)
      return dict(outputs) if isinstance(outputs, Mapping) else {"logits": outputs}

    return call

  def _plain_graph_caller(self, model) -> Callable:
    """The plain graph's caller. Split blocks (CPU implementation, head_groups > 1) run that many
    head groups side by side (kernels/cpu_transformer_block.py); the copies of the kernel
    columns each group reads are weights of the CPU model, tracked here so the SavedModel holds
    them."""
    if self.implementation != "cpu" or self.head_groups == 1:
      return self._model_caller(kernels.implementation_of(model, self.implementation))
    by_heads = kernels.implementation_of(model, self.implementation, head_groups=self.head_groups)
    own = {id(v) for v in model.variables}
    self.head_group_weights = [v for v in by_heads.variables if id(v) not in own]
    return self._model_caller(by_heads)

  def _run_model_auto(self, inputs: Mapping[str, tf.Tensor]):
    """The XLA-compiled model for up to AUTO_XLA_MAX_ROWS rows, the plain graph above that.

    On 2 CPU cores XLA took less CPU time per call than the TF graph executor on one sequence
    (about 12% less for BERT-mini at length 128; the graph pays a fixed cost per op) but more on
    batches (about 17% more at 32 rows, where the graph's oneDNN matmuls win), so the serving
    graph picks per call (bench/bench_serving.py measures both). One XLA compilation per input
    shape, so the bound keeps their number small. A `lazy_cond`, so a one-row call never visits
    the plain graph's nodes.
    """
    rows = tf.shape(inputs["input_word_ids"])[0]
    return lazy_cond(rows <= AUTO_XLA_MAX_ROWS, lambda: self._xla_model(inputs),
                     lambda: self._graph_model(inputs))

  def run_model_per_row_bucket(self, inputs: Mapping[str, tf.Tensor]) -> dict:
    """The model's outputs on packed (rows, seq) inputs, each row run at its own bucket.

    A batch of mixed lengths padded to its longest row spends most of its work on padding: 32
    real sentences of 5-65 pieces padded to 64 are 2048 positions, at their own buckets about
    1200. The rows are grouped by bucket, each group runs at its bucket's length (one model call
    per group present; the others are skipped), and the outputs go back to the rows' order, the
    per-position ones zero-padded to the call's length (positions past a row's `input_mask` are
    padding, as before). One row, an XLA-compiled model (each group size would be a new program)
    or a single bucket run the call as one.
    """
    if self._graph_model is None or len(self.buckets) == 1:
      return self._run_model(inputs)
    rows = tf.shape(inputs["input_word_ids"])[0]
    return lazy_cond(rows > 1, lambda: self._per_row_bucket()(
        {name: inputs[name] for name in _INPUT_NAMES}), lambda: self._run_model(inputs))

  def _per_row_bucket(self) -> Callable:
    """`_run_by_bucket` traced once for every signature that calls it (encoder, classifier,
    tagger: text, text pair, tokenized), so the SavedModel stores it once. Traced per signature,
    its branches (one per bucket) were most of an export's time."""
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

  def check_length(self, inputs: Mapping[str, tf.Tensor]) -> dict:
    """`serving_tokenized` inputs of any length up to max_seq_length; longer ones fail with a
    clear message (the model was exported for at most that many positions)."""
    length = tf.shape(inputs["input_word_ids"])[-1]
    check = tf.debugging.Assert(
        length <= self.seq_length,
        [tf.strings.format("input length {} exceeds max_seq_length={}",
                           (length, self.seq_length))])
    with tf.control_dependencies([check]):
      return {name: tf.identity(value) for name, value in inputs.items()}

  def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
    """string (batch,) -> int32 ragged (batch, (pieces))."""
    return self._tokenize(text)

  def tokenize_with_offsets(self, text: tf.Tensor):
    """string (batch,) -> ragged (batch, (pieces)) ids int32, begin and end byte offsets int64."""
    ids, begin, end = self._tokenize_with_offsets(text)
    return tf.cast(ids, tf.int32), tf.cast(begin, tf.int64), tf.cast(end, tf.int64)

  def signatures(self) -> dict:
    """name -> concrete function; subclasses add theirs to the tokenized one."""
    raise NotImplementedError

  def metadata(self) -> dict:
    """JSON-able description written beside the SavedModel (assets.extra/export_info.json)."""
    return {"task": self.task.numpy().decode(), "kind": self.kind_name,
            "max_seq_length": self.seq_length, "lower_case": bool(self.lower_case.numpy()),
            "labels": self.label_list, "head_groups": self.head_groups,
            "length_buckets": list(self.buckets)}
