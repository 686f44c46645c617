"""The files --input_files names (comma-separated globs) as Beam readable files, and documents
read from them file by file."""

from __future__ import annotations

import functools
import os

import apache_beam as beam
from apache_beam.io import fileio

from bert_keras.data import beam_metrics
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


class _ReadFileDocuments(beam.DoFn):
  """One matched file -> its documents, streamed; drops counted, the first undecodable line noted."""

  def __init__(self, read):
    self._read = read

  def setup(self):
    self._drops = beam_metrics.FirstDrops()

  def process(self, readable_file):
    path = readable_file.metadata.path
    noter = functools.partial(self._drops.note, path, beam_metrics.UNDECODABLE_LINE)
    with readable_file.open() as f:
      yield from self._read(f, os.path.basename(path), beam_metrics.count_dropped, on_undecodable=noter)


class ReadFileDocuments(beam.PTransform):
  """PBegin -> (doc_id, sentences) of the files matching `file_pattern` (.gz/.bz2 ok), each read by
  `read(f, source, drop, on_undecodable=...)`."""

  def __init__(self, file_pattern: str, read):
    super().__init__()
    self._file_pattern = file_pattern
    self._read = read

  def expand(self, pbegin):
    return (pbegin
            | "MatchedFiles" >> ReadMatchingFiles(self._file_pattern)
            | "ReadDocuments" >> beam.ParDo(_ReadFileDocuments(self._read)))
