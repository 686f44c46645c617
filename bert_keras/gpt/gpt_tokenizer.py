"""GPT-1's BPE tokenizer as a Keras layer: in-graph (tf.data, tf.function, SavedModel) and in Python."""

from __future__ import annotations

import base64
import os
from typing import List, Optional, Sequence

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.gpt.bpe_training import (DELIMITER_PIECE, EXTRACT_PIECE, PAD_PIECE, START_PIECE,
                                         UNK_PIECE)


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTTokenizer(keras.layers.Layer):
  """Runs a trained SentencePiece BPE model with `tensorflow_text.SentencepieceTokenizer`; the layer
  (and its config, base64) holds the model proto, so a SavedModel needs no file beside it. `encode`
  / `decode`: the same ids in Python. Special ids: `pad_id` 0, `unk_id`, and GPT-1's `start_id`,
  `delimiter_id`, `extract_id` (section 3.3)."""

  def __init__(self, model_proto: Optional[bytes | str] = None, model_path: Optional[str] = None,
               **kwargs):
    kwargs.setdefault("trainable", False)
    kwargs.setdefault("dtype", "int32")
    super().__init__(**kwargs)
    # Imported when a tokenizer is made, not when the class is defined: `keras_classes` defines it
    # in every process that loads a .keras file, most of which hold no GPT tokenizer.
    import sentencepiece as spm  # pylint: disable=import-outside-toplevel

    if (model_proto is None) == (model_path is None):
      raise UserError("GPTTokenizer needs exactly one of model_proto or model_path")
    if model_path is not None:
      if not os.path.exists(model_path):
        raise UserError(f"{model_path}: no such SentencePiece model file")
      with open(model_path, "rb") as f:
        model_proto = f.read()
    if isinstance(model_proto, str):  # from get_config
      model_proto = base64.b64decode(model_proto.encode("ascii"))
    self._processor = spm.SentencePieceProcessor()
    try:
      self._processor.LoadFromSerializedProto(model_proto)
    except RuntimeError as e:
      raise UserError(f"{model_path or 'model_proto'}: not a SentencePiece model ({e})") from e
    self.model_proto = model_proto
    ids = {}
    for piece in (PAD_PIECE, UNK_PIECE, START_PIECE, DELIMITER_PIECE, EXTRACT_PIECE):
      index = self._processor.PieceToId(piece)
      if self._processor.IdToPiece(index) != piece:
        raise UserError(f"{model_path or 'model_proto'}: the model has no {piece!r} piece; train "
                        "it with bert_keras.gpt.bpe_training.train_bpe_model")
      ids[piece] = index
    self.pad_id, self.unk_id = ids[PAD_PIECE], ids[UNK_PIECE]
    self.start_id, self.delimiter_id = ids[START_PIECE], ids[DELIMITER_PIECE]
    self.extract_id = ids[EXTRACT_PIECE]
    self._tokenizer = tf_text.SentencepieceTokenizer(model=model_proto, out_type=tf.int32)

  @property
  def vocab_size(self) -> int:
    return self._processor.GetPieceSize()

  def tokenize(self, strings):
    """(batch,) strings -> RaggedTensor int32 (batch, (pieces)); a scalar string gives (pieces,)."""
    return self._tokenizer.tokenize(tf.convert_to_tensor(strings, tf.string))

  def call(self, strings):
    return self.tokenize(strings)

  def encode(self, texts: Sequence[str]) -> List[List[int]]:
    """Python twin of `tokenize`: the same ids, for lists of str."""
    return [list(self._processor.EncodeAsIds(t)) for t in texts]

  def decode(self, ids: Sequence[int]) -> str:
    return self._processor.DecodeIds([int(i) for i in ids])

  def id_to_token(self, index: int) -> str:
    if not 0 <= index < self.vocab_size:
      raise UserError(f"token id {index} is out of range [0, {self.vocab_size})")
    return self._processor.IdToPiece(int(index))

  def token_to_id(self, token: str) -> int:
    return self._processor.PieceToId(token)

  @property
  def vocabulary(self) -> List[str]:
    return [self._processor.IdToPiece(i) for i in range(self.vocab_size)]

  def save_model(self, path: str) -> None:
    """Writes the model proto atomically (the `.model` file SentencePiece tools read)."""
    write_text(path, self.model_proto)

  def compute_output_spec(self, strings):
    return keras.KerasTensor((None, None), dtype="int32", ragged=True)

  def get_config(self):
    config = super().get_config()
    config.update(model_proto=base64.b64encode(self.model_proto).decode("ascii"))
    return config
