"""A Beam pipeline that learns a WordPiece vocabulary (vocab.txt) from the pretraining corpora.

Words are counted in parallel (the original BERT basic tokenization: cleaning, optional lower-casing
and accent stripping, punctuation split), the `max_input_words` most frequent words are gathered in
one worker (memory bounded by that number, not the corpus), and tensorflow_text's
wordpiece_tokenizer_learner_lib learns the pieces. The file layout is bert-base's: [PAD], [unused0] ..
[unused{n-1}], [UNK], [CLS], [SEP], [MASK], then single characters and pieces (n=99 gives [UNK]=100,
[CLS]=101, [SEP]=102, [MASK]=103 as in the released vocabularies).

`parse_args(argv)` -> (known_args, beam_args); `build_pipeline(p, args)`; `run(argv)`.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Iterable, List, Sequence, Tuple

import apache_beam as beam

from bert_keras.atomic_io import check_output_dir
from bert_keras.data.pretraining_data_config import INPUT_FORMATS, PretrainingDataConfig
from bert_keras.data.beam_args import add_help_aliases, check_beam_args
from bert_keras.data.beam_runner import check_runner_available, with_local_runner_defaults
from bert_keras.data.pretraining_data_pipeline import _bool, output_dir_errors, read_documents
from bert_keras.errors import UserError, worker_user_errors

VOCAB_NAME = "vocab.txt"


def reserved_tokens(num_unused: int) -> List[str]:
  """[PAD], [unused0..num_unused-1], [UNK], [CLS], [SEP], [MASK] (the released BERT layout)."""
  return ["[PAD]"] + [f"[unused{i}]" for i in range(num_unused)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]


class _CountWords(beam.DoFn):
  """(doc_id, sentences) -> words of the original basic tokenizer (one per occurrence)."""

  def __init__(self, lower_case: bool):
    self._lower_case = lower_case
    self._tokenizer = None

  def setup(self):
    from bert_keras.text.reference_tokenizer import ReferenceTokenizer  # pylint: disable=g-import-not-at-top

    self._tokenizer = ReferenceTokenizer(["[UNK]"], lower_case=self._lower_case)

  def process(self, document):
    for sentence in document[1]:
      yield from self._tokenizer.basic_tokenize(sentence)


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
                     num_iterations: int = 4, input_pattern: str = "") -> List[str]:
  """Word counts -> the vocabulary token list (reserved tokens first), deterministic.

  Words are sorted by (-count, word) first so the learner sees the same order on every run.
  `input_pattern` only names the corpus in the error an empty corpus gets.
  """
  from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner  # pylint: disable=g-import-not-at-top

  ordered = sorted(word_counts, key=lambda kv: (-kv[1], kv[0]))
  if not ordered:
    corpus = f" {input_pattern}" if input_pattern else ""
    raise UserError(f"no words in the corpus{corpus}: cannot learn a vocabulary")
  check_vocab_size(vocab_size, num_unused)
  vocab = learner.learn(ordered, vocab_size, reserved_tokens(num_unused), upper_thresh=max(ordered[0][1], min_count + 1),
                        lower_thresh=min_count, num_iterations=num_iterations,
                        max_input_tokens=len(ordered), max_token_length=max_token_length,
                        max_unique_chars=max_unique_chars, include_joiner_token=True, joiner="##")
  return vocab


def write_vocabulary(vocab: List[str], output_dir: str, config: dict) -> str:
  """Writes vocab.txt (atomically) and the resolved config beside it; returns the vocab path."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  tf.io.gfile.makedirs(output_dir)
  path = os.path.join(output_dir, VOCAB_NAME)
  for name, text in ((VOCAB_NAME, "\n".join(vocab) + "\n"),
                     ("learn_vocab_config.json", json.dumps(dict(config, vocab_tokens=len(vocab)),
                                                            indent=2, sort_keys=True) + "\n")):
    target = os.path.join(output_dir, name)
    with tf.io.gfile.GFile(target + ".tmp", "w") as f:
      f.write(text)
    tf.io.gfile.rename(target + ".tmp", target, overwrite=True)
  return path


class LearnWordPieceVocab(beam.PTransform):
  """(doc_id, sentences) -> a one-element PCollection: the vocabulary token list."""

  def __init__(self, vocab_size: int, lower_case: bool = True, num_unused: int = 99, min_count: int = 1,
               max_input_words: int = 5_000_000, num_iterations: int = 4, input_pattern: str = ""):
    super().__init__()
    self._input_pattern = input_pattern
    self._num_iterations = num_iterations
    self._vocab_size = vocab_size
    self._lower_case = lower_case
    self._num_unused = num_unused
    self._min_count = min_count
    self._max_input_words = max_input_words

  def expand(self, documents):
    return (documents
            | "Words" >> beam.ParDo(_CountWords(self._lower_case))
            | "CountWords" >> beam.combiners.Count.PerElement()
            | "MostFrequent" >> beam.combiners.Top.Of(self._max_input_words, key=lambda kv: (kv[1], kv[0]))
            | "Learn" >> beam.Map(learn_vocabulary, self._vocab_size, self._num_unused, self._min_count,
                                  num_iterations=self._num_iterations,
                                  input_pattern=self._input_pattern))


def parse_args(argv: Sequence[str]):
  """Our flags -> known_args; the rest, which must be Beam options, goes to Beam (DirectRunner
  multi-process by default)."""
  parser = argparse.ArgumentParser(description="Learns a WordPiece vocab.txt", allow_abbrev=False)
  parser.add_argument("--input_file", default=None, help="default: the embedded Wikipedia dump")
  parser.add_argument("--input_format", default="wikipedia", choices=INPUT_FORMATS)
  parser.add_argument("--output_dir", required=True)
  parser.add_argument("--vocab_size", type=int, default=30522)
  parser.add_argument("--do_lower_case", type=_bool, nargs="?", const=True, default=True)
  parser.add_argument("--num_unused", type=int, default=99)
  parser.add_argument("--min_count", type=int, default=1)
  parser.add_argument("--max_input_words", type=int, default=5_000_000)
  parser.add_argument("--num_iterations", type=int, default=4, help="learner passes per threshold")
  parser.add_argument("--json_text_key", default="text")
  add_help_aliases(parser)
  known, beam_args = parser.parse_known_args(list(argv))
  check_beam_args(beam_args, parser)
  return known, with_local_runner_defaults(beam_args)


def build_pipeline(p: beam.Pipeline, args) -> None:
  from bert_keras import resources  # pylint: disable=g-import-not-at-top

  if args.input_file is None and args.input_format != "wikipedia":
    raise UserError(f"--input_file is required with --input_format={args.input_format}")
  source = PretrainingDataConfig(input_pattern=args.input_file or resources.wikipedia_dump_path(),
                                 input_format=args.input_format, json_text_key=args.json_text_key)
  config = dict(vars(args), input_file=source.input_pattern)
  output_dir = args.output_dir
  _ = (p
       | "ReadDocuments" >> read_documents(source)
       | "Learn" >> LearnWordPieceVocab(args.vocab_size, args.do_lower_case, args.num_unused, args.min_count,
                                         args.max_input_words, args.num_iterations,
                                         input_pattern=source.input_pattern)
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
  with worker_user_errors():
    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
      build_pipeline(p, known)
  return os.path.join(known.output_dir, VOCAB_NAME)
