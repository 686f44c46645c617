"""Everything that decides the bytes of a pretraining data set (create_pretraining_data); written
into its summary JSON."""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

from bert_keras.configs.base import Config, ConfigError

INPUT_FORMATS = ("wikipedia", "bert_text", "lines", "jsonl", "tfds")
COMPRESSIONS = ("none", "gzip")
# Lines longer than this are dropped (a corpus line of megabytes is a broken file, not a sentence).
DEFAULT_MAX_LINE_BYTES = 1 << 20


def default_max_predictions(max_seq_length: int, masked_lm_prob: float = 0.15) -> int:
  """The paper's max_predictions_per_seq: 20 at length 128, 80 at length 512 (rounded up to 20s)."""
  return max(1, min(max_seq_length, 20 * math.ceil(max_seq_length * masked_lm_prob / 20)))


@dataclasses.dataclass
class PretrainingDataConfig(Config):
  """Defaults are the paper's phase 1 (google-research/bert create_pretraining_data.py flags).

  Phase 2 is max_seq_length=512, max_predictions_per_seq=80 (None picks 20 at 128, 80 at 512).
  """
  input_pattern: str = ""               # glob of input files, or the tfds name for input_format="tfds"
  input_format: str = "wikipedia"       # one of INPUT_FORMATS
  output_dir: str = ""
  vocab_file: str = ""
  lower_case: bool = True
  max_seq_length: int = 128
  max_predictions_per_seq: Optional[int] = None
  masked_lm_prob: float = 0.15
  short_seq_prob: float = 0.1
  dupe_factor: int = 10
  seed: int = 12345  # google-research/bert's --random_seed
  whole_word_mask: bool = False
  num_shards: int = 8
  compression: str = "none"
  # Documents per random-next bucket: each bucket holds this many documents (plus the requests sent
  # to it) in one worker, so worker memory depends on it, not on the corpus size.
  docs_per_bucket: int = 64
  # The original makes instances of one-sentence documents (always random next); the issue counts
  # them as bad input, so they are dropped unless this is 1.
  min_sentences_per_document: int = 2
  max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
  json_text_key: str = "text"
  tfds_split: str = "train"
  tfds_data_dir: Optional[str] = None
  output_prefix: str = "pretraining"

  RENAMED_KEYS = {"random_seed": "seed"}  # one name per idea: the training configs' name

  def __post_init__(self):
    if self.max_predictions_per_seq is None:
      self.max_predictions_per_seq = default_max_predictions(self.max_seq_length, self.masked_lm_prob)
    if self.input_format not in INPUT_FORMATS:
      raise ConfigError(f"input_format={self.input_format!r}, expected one of {INPUT_FORMATS}")
    if self.compression not in COMPRESSIONS:
      raise ConfigError(f"compression={self.compression!r}, expected one of {COMPRESSIONS}")
    if self.max_seq_length < 5:
      raise ConfigError(f"max_seq_length={self.max_seq_length} leaves no room for [CLS] A [SEP] B [SEP]")
    if not 0 < self.masked_lm_prob < 1:
      raise ConfigError(f"masked_lm_prob={self.masked_lm_prob}, expected in (0, 1)")
    if not 0 <= self.short_seq_prob <= 1:
      raise ConfigError(f"short_seq_prob={self.short_seq_prob}, expected in [0, 1]")
    for name in ("max_predictions_per_seq", "dupe_factor", "num_shards", "docs_per_bucket",
                 "min_sentences_per_document", "max_line_bytes"):
      if getattr(self, name) < 1:
        raise ConfigError(f"{name}={getattr(self, name)}, expected >= 1")
    if self.max_predictions_per_seq > self.max_seq_length:
      # Each prediction masks a distinct position of the sequence: slots beyond max_seq_length are
      # never filled, only padding that every record and training step carries.
      raise ConfigError(f"max_predictions_per_seq={self.max_predictions_per_seq} > max_seq_length="
                      f"{self.max_seq_length}: a sequence has no more positions to mask than its "
                      f"length; expected max_predictions_per_seq <= max_seq_length")

  @property
  def shard_suffix(self) -> str:
    return ".tfrecord.gz" if self.compression == "gzip" else ".tfrecord"

  def shard_name(self, shard: int) -> str:
    return f"{self.output_prefix}-{shard:05d}-of-{self.num_shards:05d}{self.shard_suffix}"
