"""Trains GPT-1's byte-pair-encoding vocabulary with SentencePiece (section 4.1: 40,000 merges).

SentencePiece's BPE learns the same kind of merge table as the released GPT-1 encoder; its model proto
is what the in-graph tokenizer (`GPTTokenizer`, tensorflow_text.SentencepieceTokenizer) executes, so
one file serves training, tf.data and exported SavedModels.
"""

from __future__ import annotations

import io
from typing import Iterable, Iterator, Sequence

from bert_keras.errors import UserError

PAD_PIECE = "<pad>"
UNK_PIECE = "<unk>"
# GPT-1 section 3.3: start <s>, delimiter $ and extract <e>, randomly initialised at fine-tuning.
# They are control symbols: they get ids but are never produced from text, so a literal "<start>"
# typed by a user cannot inject one.
START_PIECE = "<start>"
DELIMITER_PIECE = "<delim>"
EXTRACT_PIECE = "<extract>"
SPECIAL_PIECES = (START_PIECE, DELIMITER_PIECE, EXTRACT_PIECE)

# Lines longer than this (in characters) are split at spaces before training; SentencePiece skips
# longer "sentences" silently, which would drop whole Lee documents.
_MAX_PIECE_OF_TEXT = 2000


def _chunks(texts: Iterable[str]) -> Iterator[str]:
  for text in texts:
    for line in text.splitlines():
      line = line.strip()
      while len(line) > _MAX_PIECE_OF_TEXT:
        cut = line.rfind(" ", 0, _MAX_PIECE_OF_TEXT)
        cut = cut if cut > 0 else _MAX_PIECE_OF_TEXT
        yield line[:cut]
        line = line[cut:].strip()
      if line:
        yield line


def train_bpe_model(texts: Iterable[str], vocab_size: int, lower_case: bool = True,
                    character_coverage: float = 1.0, seed_sentencepiece_size: int = 1000000,
                    num_threads: int = 2, extra_control_symbols: Sequence[str] = ()) -> bytes:
  """Learns a BPE model on `texts` and returns the serialized SentencePiece ModelProto.

  `vocab_size` counts everything: <pad> (id 0), <unk> (1), the three special pieces (2, 3, 4), the
  base characters and the merges; GPT-1's is 40,478 + 3. `lower_case` folds case (NFKC + case fold),
  as GPT-1's text encoder lowercased its input. `extra_control_symbols` (e.g. "[CLS]", "[SEP]",
  "[MASK]") follow the GPT pieces, so BERT-style models of a study can share one vocabulary.
  """
  if not isinstance(vocab_size, int) or vocab_size < len(SPECIAL_PIECES) + 3:
    raise UserError(f"vocab_size={vocab_size!r} must be an integer >= {len(SPECIAL_PIECES) + 3}")
  sentences = list(_chunks(texts))
  if not sentences:
    raise UserError("no text to train the BPE vocabulary on (every input line was empty)")
  # Imported here: the piece names above are read wherever a GPTTokenizer is defined (every .keras
  # load), training happens in few places.
  import sentencepiece as spm  # pylint: disable=import-outside-toplevel

  model = io.BytesIO()
  try:
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, model_type="bpe",
        vocab_size=vocab_size, character_coverage=character_coverage,
        normalization_rule_name="nmt_nfkc_cf" if lower_case else "nmt_nfkc",
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, pad_piece=PAD_PIECE, unk_piece=UNK_PIECE,
        control_symbols=list(SPECIAL_PIECES) + list(extra_control_symbols),
        max_sentence_length=4 * _MAX_PIECE_OF_TEXT,
        seed_sentencepiece_size=seed_sentencepiece_size, num_threads=num_threads,
        minloglevel=2)
  except RuntimeError as e:
    # SentencePiece reports e.g. "Vocabulary size too high (5000). Please set it to a value <= 3321."
    raise UserError(f"sentencepiece BPE training failed with vocab_size={vocab_size}: {e}") from e
  return model.getvalue()
