"""Runs a `.tflite` export (bert_keras/export/litert_export.py) on raw text, without TensorFlow.

  model = bert_keras.serving.litert.load("out/polarity.tflite")
  model.serve(["a gripping film", "a dull one"])["label"]  # array([b'pos', b'neg'], dtype=object)
  model.serve("a gripping film")                           # one example: no batch axis

`serve` returns the SavedModel's `serve` outputs as numpy arrays (strings as bytes), equal within
1e-5. LiteRT cannot run the in-graph tokenizer's ops, so Hugging Face's WordPiece, set to the
original BERT rules, tokenizes in front of the ids-in model.
"""

from __future__ import annotations

import json
import os
from typing import Sequence

import numpy as np

from bert_keras.errors import UserError
from bert_keras.text.reference_tokenizer import MAX_CHARS_PER_WORD, is_control

INFO_NAME = "bert_keras_info"  # as bert_keras/export/litert_export.py writes them
VOCAB_NAME = "bert_keras_vocab"
FORMAT = "bert_keras.litert/1"


def wordpiece_tokenizer(vocabulary: Sequence[str], lower_case: bool):
  """A `tokenizers.Tokenizer` with the original BERT rules (packing adds [CLS] and [SEP])."""
  from tokenizers import Tokenizer, models, normalizers, pre_tokenizers  # pylint: disable=g-import-not-at-top

  tokenizer = Tokenizer(models.WordPiece(
      {token: i for i, token in enumerate(vocabulary)}, unk_token="[UNK]",
      max_input_chars_per_word=MAX_CHARS_PER_WORD))
  tokenizer.normalizer = normalizers.BertNormalizer(
      clean_text=True, handle_chinese_chars=True, strip_accents=lower_case, lowercase=lower_case)
  tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
  return tokenizer


def final_sigmas(text: str) -> str:
  """`text` with each capital sigma that the original's `str.lower` (after dropping control
  characters) makes final written as "ς"; Hugging Face always gives "σ". Same length as `text`."""
  if "Σ" not in text:
    return text
  kept = [i for i, c in enumerate(text) if not (c in ("\0", "\ufffd") or is_control(c))]
  lowered = "".join(text[i] for i in kept).lower()
  out, at = list(text), 0
  for i in kept:
    if text[i] == "Σ":
      out[i] = lowered[at]
      at += 1
    else:
      at += len(text[i].lower())
  return "".join(out)


def _texts(value, name: str) -> tuple[list[str], bool]:
  """(list of str, was a single string) from a str/bytes, a sequence of them or a numpy array."""
  decode = lambda v: v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v
  if hasattr(value, "numpy"):  # a tf.Tensor (scripts/predict.py batches with tf.constant)
    value = value.numpy()
  if isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.ndim == 0):
    value = value.item() if isinstance(value, np.ndarray) else value
    return [decode(value)], True
  texts = [decode(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
  if not all(isinstance(t, str) for t in texts):
    raise UserError(f"{name}: expected strings, got {[type(t).__name__ for t in texts][:3]}")
  return texts, False


def _single(result: dict, single: bool) -> dict:
  return {name: value[0, ...] for name, value in result.items()} if single else result


def _windows(n: int, room: int, stride: int) -> list[tuple[int, int]]:
  """(start, length) of windows of `room` pieces every `stride` (text_ops.doc_windows)."""
  step = max(min(room, stride), 1)
  return [(w * step, max(min(n - w * step, room), 0))
          for w in range(1 + (max(n - room, 0) + step - 1) // step)]


def _owners(windows, sizes) -> list[np.ndarray]:
  """Per row, each piece's window (row, start, length) by run_squad.py's max-context rule."""
  best = [np.full(n, -np.inf) for n in sizes]
  owner = [np.full(n, -1) for n in sizes]
  for w, (row, start, length) in enumerate(windows):
    within = np.arange(length)
    score = np.minimum(within, length - 1 - within) + 0.01 * length
    better = score > best[row][start:start + length]
    best[row][start:start + length][better] = score[better]
    owner[row][start:start + length][better] = w
  return owner


def _bucket(length: np.ndarray, buckets: np.ndarray) -> np.ndarray:
  """The smallest bucket >= each length; the last bucket above them (length_buckets.py)."""
  return buckets[np.minimum(np.searchsorted(buckets, length, side="left"), len(buckets) - 1)]


class LiteRTModel:
  """A loaded .tflite export: `serve(...)` and the export's metadata as attributes."""

  def __init__(self, path: str, num_threads: int | None = None):
    # pylint: disable=g-import-not-at-top
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.interpreter import Interpreter

    with open(path, "rb") as f:
      flatbuffer = schema.Model.GetRootAs(f.read(), 0)
    entries = {}  # name -> bytes of the flatbuffer's metadata entries
    for i in range(flatbuffer.MetadataLength()):
      entry = flatbuffer.Metadata(i)
      entries[entry.Name().decode("utf-8")] = flatbuffer.Buffers(entry.Buffer()).DataAsNumpy().tobytes()
    if INFO_NAME not in entries or VOCAB_NAME not in entries:
      raise UserError(f"{path}: a .tflite model without the metadata of a bert_keras LiteRT "
                      "export; expected a file written by export_model.py --format=litert")
    info = json.loads(entries[INFO_NAME].decode("utf-8"))
    if info.get("format") != FORMAT:
      raise UserError(f"{path}: format {info.get('format')!r}; this runtime reads {FORMAT!r}")
    self.info = info
    self.task, self.kind = info["task"], info["kind"]
    self.labels = list(info["labels"])
    self.max_seq_length = int(info["max_seq_length"])
    self.lower_case, self.pair = bool(info["lower_case"]), bool(info["pair"])
    self.quantize = info.get("quantize", "none")
    self.length_buckets = np.asarray(info["length_buckets"], np.int64)
    vocabulary = entries[VOCAB_NAME].decode("utf-8").split("\n")[:-1]
    ids = {token: i for i, token in enumerate(vocabulary)}
    self._cls, self._sep, self._pad = ids["[CLS]"], ids["[SEP]"], ids["[PAD]"]
    self._tokenizer = wordpiece_tokenizer(vocabulary, self.lower_case)
    # A piece that continues a word ("##ing") never starts one (tagging).
    self._continues = np.array([t.startswith("##") for t in vocabulary], dtype=bool)
    self._interpreter = Interpreter(model_path=path, num_threads=num_threads or os.cpu_count())
    self._runner = self._interpreter.get_signature_runner()
    self._outputs = info["outputs"]  # output_0, output_1, ... in this order

  def _encode(self, texts: Sequence[str]):
    if self.lower_case:
      texts = [final_sigmas(t) for t in texts]
    return self._tokenizer.encode_batch(list(texts), add_special_tokens=False)

  def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
    return [e.ids for e in self._encode(texts)]

  def _pack(self, segments_a, segments_b=None, pair: bool = False):
    """BertPacker's int32 (rows, bucket of the longest) inputs; B packed when `pair` or not empty."""
    seq = self.max_seq_length
    layouts = []  # per row: (ids, the length of [CLS] A [SEP])
    for i, a in enumerate(segments_a):
      b = segments_b[i] if segments_b is not None and (pair or segments_b[i]) else None
      keep_a = min(len(a), seq - 2 if b is None else max(seq - 3 - len(b), (seq - 2) // 2))
      ids = [self._cls, *a[:keep_a], self._sep]
      layouts.append((ids if b is None else ids + [*b[:seq - 3 - keep_a], self._sep], keep_a + 2))
    longest = max((len(ids) for ids, _ in layouts), default=0)
    width = int(_bucket(np.array([longest]), self.length_buckets)[0])
    inputs = {name: np.full((len(layouts), width), self._pad if name == "input_word_ids" else 0,
                            np.int32) for name in ("input_word_ids", "input_mask", "input_type_ids")}
    for i, (ids, first) in enumerate(layouts):
      inputs["input_word_ids"][i, :len(ids)] = ids
      inputs["input_mask"][i, :len(ids)] = 1
      inputs["input_type_ids"][i, first:len(ids)] = 1
    return inputs

  def _run(self, inputs: dict) -> dict:
    shape = inputs["input_word_ids"].shape
    if 0 in shape[:-1]:  # LiteRT kernels refuse empty tensors: run one row, keep none
      one = {name: np.zeros((1,) * (len(shape) - 1) + shape[-1:], np.int32) for name in inputs}
      return {name: value[tuple(slice(0, n) for n in shape[:-1])]
              for name, value in self._run(one).items()}
    results = self._runner(**inputs)
    return {name: results[f"output_{i}"] for i, name in enumerate(self._outputs)}

  def _run_per_row_bucket(self, inputs: dict) -> dict:
    """Each row at its own bucket, per-position outputs zero-padded (run_model_per_row_bucket)."""
    rows, width = inputs["input_word_ids"].shape
    if rows <= 1 or len(self.length_buckets) == 1:
      return self._run(inputs)
    position_axis = {"sequence_output": 1, "encoder_outputs": 2,
                     "logits": 1 if self.kind == "tagging" else None}
    row_bucket = _bucket(inputs["input_mask"].sum(axis=1), self.length_buckets)
    outputs = {}
    for bucket in np.unique(row_bucket):
      members = np.flatnonzero(row_bucket == bucket)
      group = self._run({name: np.ascontiguousarray(value[members, :bucket])
                         for name, value in inputs.items()})
      for name, value in group.items():
        axis = position_axis.get(name)
        if name not in outputs:
          shape = [rows, *value.shape[1:]]
          if axis is not None:
            shape[axis] = width
          outputs[name] = np.zeros(shape, value.dtype)
        index = (members,) if axis is None else (members,) + (slice(None),) * (axis - 1) + (
            slice(0, bucket),)
        outputs[name][index] = value
    return outputs

  def serve(self, *args, **kwargs) -> dict:
    """The SavedModel's `serve` call forms: (text_a, text_b=None), (context, endings), (text) or
    (question, context)."""
    return {"multiple_choice": self._serve_choices, "tagging": self._serve_tags,
            "squad": self._serve_spans}.get(self.kind, self._serve_text)(*args, **kwargs)

  def _serve_text(self, text_a, text_b=None) -> dict:
    texts_a, single = _texts(text_a, "text_a")
    texts_b = None
    if text_b is not None:
      texts_b, single_b = _texts(text_b, "text_b")
      if len(texts_b) != len(texts_a) or single_b != single:
        raise UserError(f"text_a has {len(texts_a)} rows but text_b has {len(texts_b)}")
    elif self.pair:
      raise UserError(f"this model was fine-tuned on sentence pairs (task {self.task!r}): pass "
                      "text_b as well (serve(text_a=..., text_b=...))")
    inputs = self._pack(self.tokenize(texts_a),
                        self.tokenize(texts_b) if texts_b is not None else None, self.pair)
    outputs = self._run_per_row_bucket(inputs)
    if self.kind == "encoder":
      result = {**outputs, "input_mask": inputs["input_mask"]}
    elif self.kind == "regression":
      result = {"score": outputs["logits"][:, 0]}
    else:
      result = self._classes(outputs["logits"])
      result["label"] = np.array([self.labels[i].encode("utf-8") for i in result["label_id"]],
                                 dtype=object).reshape(result["label_id"].shape)
    return _single(result, single)

  def _serve_choices(self, context, endings) -> dict:
    contexts, single = _texts(context, "context")
    if single:
      endings = [endings]
    endings = [_texts(row, "endings")[0] for row in endings]
    if len(endings) != len(contexts):
      raise UserError(f"context has {len(contexts)} rows but endings has {len(endings)}")
    choices = {len(row) for row in endings}
    if len(choices) > 1:
      raise UserError(f"every row of endings must have the same number of choices, got "
                      f"{sorted(choices)}")
    choices = choices.pop() if choices else 0
    context_ids = self.tokenize(contexts)
    ending_ids = self.tokenize([e for row in endings for e in row])
    packed = self._pack([context_ids[i // choices] for i in range(len(ending_ids))]
                        if choices else [], ending_ids, pair=True)
    shape = (len(contexts), choices, packed["input_word_ids"].shape[1])
    outputs = self._run({name: value.reshape(shape) for name, value in packed.items()})
    result = self._classes(outputs["logits"])
    return _single({"probabilities": result["probabilities"], "choice": result["label_id"]}, single)

  def _piece_tags(self, ids: list[list[int]]) -> list[np.ndarray]:
    """Every piece's tag from its max-context window (TaggerServing._piece_tags)."""
    room, stride = self.max_seq_length - 2, int(self.info["doc_stride"])
    windows = [(row, start, length) for row, pieces in enumerate(ids)
               for start, length in (_windows(len(pieces), room, stride) if stride
                                     else [(0, len(pieces))])]
    inputs = self._pack([ids[row][start:start + length] for row, start, length in windows])
    tags = self._run_per_row_bucket(inputs)["logits"].argmax(axis=-1)  # (windows, seq)
    starts = np.array([start for _, start, _ in windows], np.int64)
    return [tags[owner, 1 + np.arange(len(owner)) - starts[owner]]
            for owner in _owners(windows, [len(pieces) for pieces in ids])]

  def _serve_tags(self, text) -> dict:
    texts, single = _texts(text, "text")
    encodings = self._encode(texts)
    room = None if self.info["doc_stride"] else self.max_seq_length - 2
    ids = [e.ids[:room] for e in encodings]
    offsets = [e.offsets[:room] for e in encodings]
    piece_tags = self._piece_tags(ids)
    prefix, kind = self.info["tag_prefix"], self.info["tag_type"]
    types = self.info["entity_types"]
    entities = []  # per row: [type, begin, end], conlleval chunks of the words' tags
    for row, pieces in enumerate(ids):
      found, previous = [], None  # previous: the word before's tag, if inside an entity
      for p, piece in enumerate(pieces):
        begin, end = offsets[row][p]
        if p and self._continues[piece]:  # a "##" piece goes on its word (and entity)
          if previous is not None:
            found[-1][2] = max(found[-1][2], end)
          continue
        tag = int(piece_tags[row][p])  # a word takes its first piece's tag
        if prefix[tag] and (prefix[tag] == 1 or previous is None or kind[previous] != kind[tag]):
          found.append([types[kind[tag]], begin, end])
        elif prefix[tag]:
          found[-1][2] = max(found[-1][2], end)
        previous = tag if prefix[tag] else None
      entities.append(found)
    shape = (len(texts), max(map(len, entities), default=0))
    result = {"entity_type": np.full(shape, b"", dtype=object),
              "entity_text": np.full(shape, b"", dtype=object),
              "entity_start": np.full(shape, -1, np.int32), "entity_end": np.full(shape, -1, np.int32)}
    for row, found in enumerate(entities):
      for e, (entity_type, begin, end) in enumerate(found):
        values = (entity_type.encode("utf-8"), texts[row][begin:end].encode("utf-8"), begin, end)
        for name, value in zip(result, values):
          result[name][row, e] = value
    result["num_entities"] = np.array([len(found) for found in entities], np.int32)
    return _single(result, single)

  def _serve_spans(self, question, context) -> dict:
    """SpanServing's outputs: run_squad.py's best span over a context's windows."""
    questions, single = _texts(question, "question")
    contexts, _ = _texts(context, "context")
    if len(questions) != len(contexts):
      raise UserError(f"question has {len(questions)} rows but context has {len(contexts)}")
    s, seq = self.info, self.max_seq_length
    query = [ids[:min(s["max_query_length"], seq - 4)] for ids in self.tokenize(questions)]
    docs = self._encode(contexts)
    windows = [(e, start, length) for e, doc in enumerate(docs)
               for start, length in _windows(len(doc.ids), seq - 3 - len(query[e]), s["doc_stride"])]
    example = np.array([w[0] for w in windows])
    start = np.array([w[1] for w in windows])
    length = np.array([w[2] for w in windows])
    inputs = self._pack([query[e] for e in example],
                        [docs[e].ids[b:b + n] for e, b, n in windows], pair=True)
    outputs = self._run(inputs)
    start_logits, end_logits = outputs["start_logits"], outputs["end_logits"]  # (windows, seq)
    width = start_logits.shape[1]
    within = np.arange(width)[None, :] - (np.array([len(query[e]) for e in example]) + 2)[:, None]
    in_context = (within >= 0) & (within < length[:, None])
    max_context = np.zeros_like(in_context)
    for e, owner in enumerate(_owners(windows, [len(doc.ids) for doc in docs])):
      pieces = np.arange(len(owner))
      max_context[owner, pieces - start[owner] + len(query[e]) + 2] = True
    k = min(s["n_best_size"], width)
    top_start = start_logits >= np.sort(start_logits, axis=1)[:, -k][:, None]
    top_end = end_logits >= np.sort(end_logits, axis=1)[:, -k][:, None]
    offset = np.arange(width)[None, :] - np.arange(width)[:, None]  # j - i
    band = (offset >= 0) & (offset < s["max_answer_length"])
    valid = ((max_context & top_start)[:, :, None] & (in_context & top_end)[:, None, :]
             & band[None])
    span = np.where(valid, start_logits[:, :, None] + end_logits[:, None, :],
                    np.float32(-np.inf)).reshape(len(windows), -1)
    window_best, window_arg = span.max(axis=1), span.argmax(axis=1)
    batch = len(questions)
    result = {"answer": np.full(batch, b"", dtype=object), "start": np.full(batch, -1, np.int32),
              "end": np.full(batch, -1, np.int32), "score": np.zeros(batch, np.float32),
              "null_score_diff": np.zeros(batch, np.float32), "no_answer": np.zeros(batch, bool)}
    for e in range(batch):
      mine = np.flatnonzero(example == e)
      has_span = bool(valid[mine].any())
      best = np.float32(window_best[mine].max() if has_span else -np.inf)
      null = (start_logits[mine, 0] + end_logits[mine, 0]).min()
      no_answer = not has_span or (s["version_2"]
                                   and null - best > np.float32(s["null_score_diff_threshold"]))
      result["score"][e], result["null_score_diff"][e] = best, null - best
      result["no_answer"][e] = no_answer
      if no_answer:
        continue
      w = mine[np.flatnonzero(window_best[mine] >= best)[0]]
      i, j = divmod(int(window_arg[w]), width)
      begin = docs[e].offsets[start[w] + within[w, i]][0]
      end = docs[e].offsets[start[w] + within[w, j]][1]
      result["answer"][e] = contexts[e][begin:end].encode("utf-8")
      result["start"][e], result["end"][e] = begin, end
    return _single(result, single)

  @staticmethod
  def _classes(logits: np.ndarray) -> dict:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return {"probabilities": (shifted / shifted.sum(axis=-1, keepdims=True)).astype(np.float32),
            "label_id": logits.argmax(axis=-1).astype(np.int32)}


def load(path: str, num_threads: int | None = None) -> LiteRTModel:
  """A .tflite export, ready to `serve`; num_threads: LiteRT's (default: every core)."""
  if not os.path.isfile(path):
    raise UserError(f"{path}: no such .tflite file")
  return LiteRTModel(path, num_threads)
