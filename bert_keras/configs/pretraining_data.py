"""What decides a pretraining data set's bytes (in its summary.json): the Beam script's flags and more."""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

from bert_keras.configs.base import Config, field

INPUT_FORMATS = ("wikipedia", "bert_text", "lines", "jsonl", "tfds")
COMPRESSIONS = ("none", "gzip")
DEFAULT_MAX_LINE_BYTES = 1 << 20


def default_max_predictions(max_seq_length: int, masked_lm_prob: float = 0.15) -> int:
  """The paper's: 20 at length 128, 80 at 512 (rounded up to 20s)."""
  return max(1, min(max_seq_length, 20 * math.ceil(max_seq_length * masked_lm_prob / 20)))


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig(Config):
  """Defaults: the paper's phase 1 (google-research/bert's flags); phase 2: length 512."""
  input_files: str = field("", "comma-separated globs (tfds: the dataset name); empty: embedded Wikipedia")
  input_format: str = field("wikipedia", "how the input files are laid out")
  output_dir: str = field("", "where the TFRecord shards and summary.json go")
  vocab_file: str = field("", "the WordPiece vocab.txt; empty: the real bert-base-uncased one")
  lower_case: bool = field(True, "lowercase the text (an uncased vocabulary)")
  max_seq_length: int = field(128, "tokens per example, [CLS] and [SEP] included")
  max_predictions_per_seq: Optional[int] = field(None, "masked positions per example; default: 20 at 128")
  masked_lm_prob: float = field(0.15, "share of tokens masked (80/10/10)")
  short_seq_prob: float = field(0.1, "share of examples with a shorter target length")
  dupe_factor: int = field(10, "copies of the corpus, each with different masks")
  seed: int = field(12345, "seed of the masks and sentence pairs")
  whole_word_mask: bool = field(False, "mask every piece of a word together")
  num_shards: int = field(8, "output TFRecord shards")
  compression: str = field("none", "compression of the TFRecord shards")
  docs_per_bucket: int = field(64, "documents per random-next bucket: a worker's memory")
  min_sentences_per_document: int = field(2, "shorter documents are dropped; 1 keeps all, as the original")
  max_line_bytes: int = field(DEFAULT_MAX_LINE_BYTES, "longer input lines (broken files) are dropped")
  json_text_key: str = field("text", "jsonl: the key of each record's text")
  tfds_split: str = field("train", "tfds: the split to read")
  tfds_data_dir: Optional[str] = field(None, "tfds: the data directory")
  output_prefix: str = field("pretraining", "shards are <output_prefix>-SSSSS-of-NNNNN.tfrecord")
  # Given by the Beam script's flags or the pipeline's artifacts; the others are component parameters.
  LOCATION_FIELDS = ("input_files", "input_format", "output_dir", "vocab_file", "lower_case",
                     "json_text_key", "tfds_split", "tfds_data_dir", "output_prefix")
  RANGES = dict(masked_lm_prob="(0, 1)", short_seq_prob="[0, 1]", dupe_factor=">= 1",
                num_shards=">= 1", docs_per_bucket=">= 1", min_sentences_per_document=">= 1",
                max_line_bytes=">= 1", max_seq_length=">= 5",
                max_predictions_per_seq="[1, max_seq_length]")  # each masks a distinct position
  CHOICES = dict(input_format=INPUT_FORMATS, compression=COMPRESSIONS)

  def validate(self):
    if self.max_predictions_per_seq is None:
      object.__setattr__(self, "max_predictions_per_seq",
                         default_max_predictions(self.max_seq_length, self.masked_lm_prob))

  @property
  def shard_suffix(self) -> str:
    return ".tfrecord.gz" if self.compression == "gzip" else ".tfrecord"

  def shard_name(self, shard: int) -> str:
    return f"{self.output_prefix}-{shard:05d}-of-{self.num_shards:05d}{self.shard_suffix}"
