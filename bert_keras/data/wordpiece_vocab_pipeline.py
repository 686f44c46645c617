"""A Beam pipeline that learns a WordPiece vocab.txt: words counted in parallel (the original
basic tokenization), the `max_input_words` most frequent gathered in one worker (memory bounded by
that number, not the corpus), pieces learned by tensorflow_text's learner (wordpiece_learner). The
layout is bert-base's: [PAD], [unused0..n-1], [UNK], [CLS], [SEP], [MASK], then pieces (n=99: [CLS]=101).
"""

from __future__ import annotations

import collections
import json
import logging
import os
from typing import Iterable, List, Sequence, Tuple

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from bert_keras.atomic_io import check_output_dir, gfile_write_text
from bert_keras.data import beam_metrics
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.data.beam_args import parse_vocab_args as parse_args  # noqa: F401
from bert_keras.data.beam_progress import ReportProgress, heartbeat
from bert_keras.data.cached_wordpiece_tokenizer import whitespace_words
from bert_keras.beam_runner import check_runner_available
from bert_keras.data.pretraining_data_pipeline import default_input_files, output_dir_errors, read_documents
from bert_keras.errors import UserError, worker_user_errors

VOCAB_NAME = "vocab.txt"
CONFIG_NAME = "learn_vocab_config.json"
# Counter of the distinct words the learner got: 0 after a run means the corpus had no words.
LEARNED_WORDS = "vocab_input_words"
# Counter of the tokens written to vocab.txt (learn_vocab_config.json's vocab_tokens).
WRITTEN_TOKENS = "vocab_tokens"
# Distinct words a worker counts before passing them on (~100 bytes each).
MAX_COUNTED_WORDS = 1 << 17


def reserved_tokens(num_unused: int) -> List[str]:
  return ["[PAD]"] + [f"[unused{i}]" for i in range(num_unused)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


class _CountWords(beam.DoFn):
  """(doc_id, sentences) -> (word, count) of the original basic tokenizer's words, counted per
  bundle and passed on at MAX_COUNTED_WORDS distinct words (bounded memory) and the bundle's end.
  Text whose basic words are its whitespace words' one by one is counted by whitespace word."""

  def __init__(self, lower_case: bool):
    self._lower_case = lower_case
    self._tokenizer = None

  def setup(self):
    from bert_keras.text.reference_tokenizer import ReferenceTokenizer  # pylint: disable=g-import-not-at-top

    self._tokenizer = ReferenceTokenizer(["[UNK]"], lower_case=self._lower_case)

  def start_bundle(self):
    self._spaced, self._basic = collections.Counter(), collections.Counter()

  def process(self, document):
    for sentence in document[1]:
      words = whitespace_words(sentence)
      if words is None:
        self._basic.update(self._tokenizer.basic_tokenize(sentence))
      else:
        self._spaced.update(words)
    if len(self._spaced) + len(self._basic) >= MAX_COUNTED_WORDS:
      yield from self._flush()

  def finish_bundle(self):
    for word_count in self._flush():
      yield GlobalWindows.windowed_value(word_count)

  def _flush(self):
    counts = self._basic
    for word, count in self._spaced.items():
      for basic in self._tokenizer.basic_tokenize(word):
        counts[basic] += count
    self.start_bundle()
    return counts.items()


def check_vocab_size(vocab_size: int, num_unused: int) -> None:
  """UserError unless `vocab_size` leaves room for pieces after the reserved tokens."""
  if num_unused < 0:
    raise UserError(f"num_unused={num_unused}: expected a number >= 0")
  reserved = len(reserved_tokens(num_unused))
  if vocab_size <= reserved:
    raise UserError(f"vocab_size={vocab_size} leaves no room after {reserved} reserved tokens "
                    f"(num_unused={num_unused}): expected vocab_size > {reserved}")


def learn_vocabulary(word_counts: Iterable[Tuple[str, int]], vocab_size: int, num_unused: int,
                     min_count: int = 1, max_token_length: int = 50, max_unique_chars: int = 1000,
                     num_iterations: int = 4, input_files: str = "") -> List[str]:
  """Word counts -> the vocabulary token list (reserved tokens first), deterministic: words are
  sorted by (-count, word) first. `input_files` names the corpus in an empty corpus's error."""
  from bert_keras.data import wordpiece_learner  # pylint: disable=g-import-not-at-top

  ordered = sorted(word_counts, key=lambda kv: (-kv[1], kv[0]))
  if not ordered:
    raise no_words_error(input_files, {}, {})
  check_vocab_size(vocab_size, num_unused)
  return wordpiece_learner.learn(ordered, vocab_size, reserved_tokens(num_unused),
                                 upper_thresh=max(ordered[0][1], min_count + 1), lower_thresh=min_count,
                                 num_iterations=num_iterations, max_input_tokens=len(ordered),
                                 max_token_length=max_token_length, max_unique_chars=max_unique_chars)


def write_vocab_config(output_dir: str, config: dict, vocab_tokens: int) -> None:
  gfile_write_text(os.path.join(output_dir, CONFIG_NAME),
                   json.dumps(dict(config, vocab_tokens=vocab_tokens), indent=2, sort_keys=True) + "\n")


def write_vocabulary(vocab: List[str], output_dir: str, config: dict) -> None:
  """Writes vocab.txt and the resolved config beside it; nothing for [] (a corpus without words:
  `run` raises the error)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  if vocab:
    tf.io.gfile.makedirs(output_dir)
    gfile_write_text(os.path.join(output_dir, VOCAB_NAME), "\n".join(vocab) + "\n")
    write_vocab_config(output_dir, config, len(vocab))
    beam_metrics.counter(WRITTEN_TOKENS).inc(len(vocab))


def _learn(word_counts, empty_ok: bool, *args, **kwargs) -> List[str]:
  """learn_vocabulary, counting the words under LEARNED_WORDS; `empty_ok`: [] for a corpus without
  words (the main process raises the error, with what the readers dropped, which a worker cannot know)."""
  word_counts = list(word_counts)
  beam_metrics.counter(LEARNED_WORDS).inc(len(word_counts))
  return learn_vocabulary(word_counts, *args, **kwargs) if word_counts or not empty_ok else []


def no_words_error(input_files: str, dropped: dict, first_dropped: dict) -> UserError:
  note = beam_metrics.undecodable_note(dropped, first_dropped)
  corpus = f" {input_files}" if input_files else ""
  return UserError(f"no words in the corpus{corpus}: cannot learn a vocabulary" + (f"; {note}" if note else ""))


class LearnWordPieceVocab(beam.PTransform):
  """(doc_id, sentences) -> a one-element PCollection: the vocabulary token list. `settings` holds
  vocab_size, lower_case, num_unused, min_count, max_input_words and optionally num_iterations;
  `empty_ok`: a corpus without words gives [] (the caller raises) instead of a UserError."""

  def __init__(self, settings, input_files: str = "", empty_ok: bool = False):
    super().__init__()
    self._settings = settings
    self._input_files = input_files
    self._empty_ok = empty_ok

  def expand(self, documents):
    s = self._settings
    return (documents
            | "Words" >> beam.ParDo(_CountWords(s["lower_case"]))
            | "CountWords" >> beam.CombinePerKey(sum)
            | "MostFrequent" >> beam.combiners.Top.Of(s["max_input_words"], key=lambda kv: (kv[1], kv[0]))
            | "Learn" >> beam.Map(_learn, self._empty_ok, s["vocab_size"], s["num_unused"], s["min_count"],
                                  num_iterations=s.get("num_iterations", 4),
                                  input_files=self._input_files))


def _source_and_config(args):
  """(the PretrainingDataConfig that reads the corpus, the resolved config for the JSON) of `args`."""
  source = PretrainingDataConfig(input_files=default_input_files(args),
                                 input_format=args.input_format, json_text_key=args.json_text_key)
  flags = {k: v for k, v in vars(args).items() if k != "config_file"}  # the values it gave are here
  return source, dict(flags, input_files=source.input_files)


def build_pipeline(p: beam.Pipeline, args) -> None:
  """Adds reading, learning and writing to `p`. A corpus without words writes nothing (the
  LEARNED_WORDS counter stays 0): `run` raises the error, naming the lines dropped as not UTF-8."""
  source, config = _source_and_config(args)
  _ = (p
       | "ReadDocuments" >> read_documents(source)
       | "ReportProgress" >> beam.ParDo(ReportProgress("documents read"))
       | "Learn" >> LearnWordPieceVocab(vars(args), source.input_files, empty_ok=True)
       | "Write" >> beam.Map(write_vocabulary, args.output_dir, config))


def build_corpus_pipeline(p: beam.Pipeline, corpus_pattern: str, output_dir: str, config: dict) -> None:
  """The vocabulary component's graph: corpus shards (corpus ingestion's) -> vocab.txt in
  `output_dir`, `config` (LearnWordPieceVocab's settings and more) as learn_vocab_config.json."""
  from bert_keras.data.bert_corpus_reader import ReadBertCorpus  # pylint: disable=g-import-not-at-top

  _ = (p
       | "ReadCorpus" >> ReadBertCorpus(corpus_pattern)
       | "Learn" >> LearnWordPieceVocab(config)
       | "Write" >> beam.Map(write_vocabulary, output_dir, config))


def run(argv: Sequence[str]) -> str:
  """Runs the pipeline; returns the path of the written vocab.txt."""
  from apache_beam.options.pipeline_options import PipelineOptions  # pylint: disable=g-import-not-at-top

  known, beam_args = parse_args(argv)
  check_runner_available(beam_args)
  # Checked here, not only in the worker that learns, so a bad value fails before any reading.
  check_vocab_size(known.vocab_size, known.num_unused)
  check_output_dir(known.output_dir)
  if "://" in known.output_dir:  # the worker that writes vocab.txt would fail only at the end
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    with output_dir_errors(known.output_dir, "reach the output directory"):
      tf.io.gfile.exists(known.output_dir)
  source, config = _source_and_config(known)
  with worker_user_errors():
    pipeline = beam.Pipeline(options=PipelineOptions(beam_args))
    build_pipeline(pipeline, known)
    with heartbeat("learn_vocab"):
      result = pipeline.run()
      result.wait_until_finish()
  counters = beam_metrics.query_counters(result)
  dropped = {name[len(beam_metrics.DROPPED_PREFIX):]: int(v) for name, v in sorted(counters.items())
             if name.startswith(beam_metrics.DROPPED_PREFIX)}
  first_dropped = dict(sorted(beam_metrics.query_first_drops(result).items()))
  if not counters.get(LEARNED_WORDS):
    raise no_words_error(source.input_files, dropped, first_dropped)
  note = beam_metrics.undecodable_note(dropped, first_dropped)
  if note:
    logging.warning("%s: dropped, the vocabulary was learned without them", note)
  # The worker wrote the config before the counts were known; written again with what was dropped.
  with output_dir_errors(known.output_dir, f"write {CONFIG_NAME}"):
    write_vocab_config(known.output_dir, dict(config, dropped=dropped, first_dropped=first_dropped),
                       int(counters.get(WRITTEN_TOKENS, 0)))
  return os.path.join(known.output_dir, VOCAB_NAME)
