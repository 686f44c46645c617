"""The files --input_files names (comma-separated globs) as Beam readable files."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io import fileio

from bert_keras.errors import UserError
from bert_keras.input_checks import split_patterns


def match_or_raise(file_patterns: str) -> list:
  """The metadata of the files matching `file_patterns`, when the graph is built; UserError naming
  the first pattern that matches none."""
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top

  metadata = []
  for pattern in split_patterns(file_patterns) or [file_patterns]:
    try:
      matched = FileSystems.match([pattern])[0].metadata_list
    except Exception as e:  # pylint: disable=broad-except
      raise UserError(f"{pattern}: cannot list input files ({e})") from e
    if not matched:
      raise UserError(f"{pattern}: no input file matches this pattern")
    metadata += matched
  return metadata


class ReadMatchingFiles(beam.PTransform):
  """PBegin -> one `ReadableFile` per matching file, reshuffled so files spread out."""

  def __init__(self, file_pattern: str):
    super().__init__()
    self._file_pattern = file_pattern

  def expand(self, pbegin):
    match_or_raise(self._file_pattern)
    return (pbegin
            | "Patterns" >> beam.Create(split_patterns(self._file_pattern))
            | "MatchFiles" >> fileio.MatchAll()
            | "SpreadFiles" >> beam.Reshuffle()
            | "ReadMatches" >> fileio.ReadMatches())
