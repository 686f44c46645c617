"""The files a glob matches, as Beam readable files spread over the workers (shared by the readers)."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io import fileio

from bert_keras.errors import UserError


def match_or_raise(file_pattern: str) -> list:
  """The metadata of the files matching `file_pattern`; UserError naming it when none does.

  Checked when the graph is built, so a mistyped path fails before any worker starts.
  """
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top

  try:
    metadata = FileSystems.match([file_pattern])[0].metadata_list
  except Exception as e:  # pylint: disable=broad-except
    raise UserError(f"{file_pattern}: cannot list input files ({e})") from e
  if not metadata:
    raise UserError(f"{file_pattern}: no input file matches this pattern")
  return metadata


class ReadMatchingFiles(beam.PTransform):
  """PBegin -> one `ReadableFile` per file matching `file_pattern`, reshuffled so files spread out."""

  def __init__(self, file_pattern: str):
    super().__init__()
    self._file_pattern = file_pattern

  def expand(self, pbegin):
    match_or_raise(self._file_pattern)
    return (pbegin
            | "MatchFiles" >> fileio.MatchFiles(self._file_pattern)
            | "SpreadFiles" >> beam.Reshuffle()
            | "ReadMatches" >> fileio.ReadMatches())
