"""The Beam pipeline that turns a text corpus into BERT pretraining TFRecords (section 3.1, A.2),
with memory per worker flat in the corpus (docs/design.md): read -> tokenize -> examples -> sorted
shards in <output_dir>/.staging -> published with summary.json. `parse_args(argv)` -> (known_args,
beam_args); `build_pipeline(p, args)`; `create_pretraining_data(config, beam_args)` runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import shutil
from typing import Optional, Sequence

import apache_beam as beam

from bert_keras.atomic_io import check_output_dir
from bert_keras.data import beam_metrics
from bert_keras.data.beam_args import parse_pretraining_data_args as parse_args  # noqa: F401
from bert_keras.beam_runner import check_runner_available
from bert_keras.data.create_pretraining_examples import CreatePretrainingExamples
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.data.beam_progress import ReportProgress, heartbeat
from bert_keras.data.tfrecord_shards import prepare_staging_dir, publish_shards, staging_dir_for, write_tfrecord_shards
from bert_keras.data.tokenize_documents import TokenizeDocuments
from bert_keras.errors import UserError, worker_user_errors


def default_input_files(args) -> str:
  """--input_files, or the embedded Wikipedia dump for --input_format=wikipedia."""
  from bert_keras import resources  # pylint: disable=g-import-not-at-top

  if args.input_files:
    return args.input_files
  if args.input_format != "wikipedia":
    raise UserError(f"--input_files is required with --input_format={args.input_format}")
  return resources.wikipedia_dump_path()


def config_from_args(args: argparse.Namespace) -> PretrainingDataConfig:
  """The config of the flags, the embedded dump and the real uncased vocab by default."""
  from bert_keras import resources  # pylint: disable=g-import-not-at-top

  values = {name: getattr(args, name) for name in PretrainingDataConfig.field_names()}
  return PretrainingDataConfig(**dict(values, input_files=default_input_files(args),
                                      vocab_file=args.vocab_file or resources.uncased_vocab_path()))


def read_documents(config: PretrainingDataConfig) -> beam.PTransform:
  """The reader PTransform of config.input_format (only it imported): PBegin -> (doc_id, sentences)."""
  # pylint: disable=g-import-not-at-top
  if config.input_format == "wikipedia":
    from bert_keras.data.wikipedia_reader import ReadWikipediaDump
    return ReadWikipediaDump(config.input_files)
  if config.input_format == "bert_text":
    from bert_keras.data.bert_corpus_reader import ReadBertCorpus
    return ReadBertCorpus(config.input_files, config.max_line_bytes)
  if config.input_format in ("lines", "jsonl"):
    from bert_keras.data.line_document_reader import ReadLineDocuments
    key = config.json_text_key if config.input_format == "jsonl" else None
    return ReadLineDocuments(config.input_files, key, config.max_line_bytes)
  from bert_keras.data.tfds_reader import ReadTfdsDocuments
  return ReadTfdsDocuments(config.input_files, config.tfds_split, config.tfds_data_dir, config.json_text_key)


def build_pipeline(p: beam.Pipeline, args) -> None:
  """Adds the graph to `p` (`args`: parse_args's namespace or a PretrainingDataConfig); shards go
  to <output_dir>/.staging."""
  config = args if isinstance(args, PretrainingDataConfig) else config_from_args(args)
  _ = (p
       | "ReadDocuments" >> read_documents(config)
       | "ReportProgress" >> beam.ParDo(ReportProgress("documents read"))
       | "Tokenize" >> beam.ParDo(TokenizeDocuments(config.vocab_file, config.lower_case,
                                                    config.min_sentences_per_document))
       | "CreateExamples" >> CreatePretrainingExamples(config, staging_dir_for(config.output_dir))
       | "ReportInstances" >> beam.ParDo(ReportProgress("instances created",
                                                        weight=lambda shard_rows: len(shard_rows[1])))
       | "WriteShards" >> write_tfrecord_shards(staging_dir_for(config.output_dir), config))


def summarize(config: PretrainingDataConfig, counters: dict, first_dropped: Optional[dict] = None) -> dict:
  """The summary JSON: config, the vocabulary's line count (run_pretraining checks it), counts,
  ratios, dropped records by reason and where ("file:line") each reason's first one was."""
  from bert_keras.text.vocab import load_vocab  # pylint: disable=g-import-not-at-top

  get = lambda name: int(counters.get(name, 0))
  masked = get("masked_positions")
  instances = get("instances")
  dropped = {name[len(beam_metrics.DROPPED_PREFIX):]: int(v) for name, v in sorted(counters.items())
             if name.startswith(beam_metrics.DROPPED_PREFIX)}
  return {
      # A local vocab_file absolute: run_pretraining reads it from another working directory.
      "config": dict(dataclasses.asdict(config), vocab_file=config.vocab_file if "://" in config.vocab_file
                     else os.path.abspath(config.vocab_file)),
      "vocab_size": len(load_vocab(config.vocab_file)),
      "documents": get("documents"),
      "sentences": get("sentences"),
      "corpus_tokens": get("corpus_tokens"),
      "instances": instances,
      "instance_tokens": get("instance_tokens"),
      "masked_positions": masked,
      "mask_ratio": masked / max(1, get("instance_tokens")),
      "masked_as_mask_fraction": get("masked_as_mask") / max(1, masked),
      "masked_as_random_fraction": get("masked_as_random") / max(1, masked),
      "masked_as_kept_fraction": get("masked_as_kept") / max(1, masked),
      "random_next_fraction": get("random_next") / max(1, instances),
      "dropped": dropped,
      "first_dropped": dict(sorted((first_dropped or {}).items())),
  }


def run(argv: Sequence[str]) -> dict:
  known, beam_args = parse_args(argv)
  check_runner_available(beam_args)
  return create_pretraining_data(config_from_args(known), beam_args)


def create_pretraining_data(config: PretrainingDataConfig, beam_args: Sequence[str]) -> dict:
  """The whole run, for the script and the pretraining_examples component: checks, the pipeline,
  a refusal of a run without instances, then the shards published and summary.json (last)."""
  from apache_beam.options.pipeline_options import PipelineOptions  # pylint: disable=g-import-not-at-top

  check_output_dir(config.output_dir)
  check_vocabulary(config)
  local = "://" not in config.output_dir
  created = local and not os.path.exists(config.output_dir)
  with output_dir_errors(config.output_dir, "create the staging directory "
                         f"{staging_dir_for(config.output_dir)}"):
    prepare_staging_dir(config.output_dir)
  try:
    with worker_user_errors():
      pipeline = beam.Pipeline(options=PipelineOptions(list(beam_args)))
      build_pipeline(pipeline, config)
      with heartbeat("create_pretraining_data"):
        result = pipeline.run()
        result.wait_until_finish()
    summary = summarize(config, beam_metrics.query_counters(result),
                        beam_metrics.query_first_drops(result))
    note = beam_metrics.undecodable_note(summary["dropped"], summary["first_dropped"])
    if note:
      logging.warning("%s: dropped, the corpus was read without them", note)
    check_has_instances(config, summary)
  except BaseException:
    # A failed run leaves nothing behind (remotely, the next run's prepare_staging_dir cleans up).
    if local:
      shutil.rmtree(staging_dir_for(config.output_dir), ignore_errors=True)
      if created:
        with contextlib.suppress(OSError):
          os.rmdir(config.output_dir)  # only when empty
    raise
  publish_shards(config.output_dir, config, summary)
  return summary


@contextlib.contextmanager
def output_dir_errors(output_dir: str, action: str):
  """Within: a failure of the filesystem of `output_dir` is a UserError naming it, `action` and the
  reason: any exception for a remote path (no network, credentials or filesystem), OSError locally."""
  try:
    yield
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    if "://" not in output_dir and not isinstance(e, OSError):
      raise
    reason = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
    raise UserError(f"--output_dir={output_dir}: cannot {action} ({type(e).__name__}: "
                    f"{reason or type(e).__name__})") from None


def check_vocabulary(config: PretrainingDataConfig) -> None:
  """Loads the vocabulary in the main process: a bad file is one error before any worker starts."""
  from bert_keras.data.cached_wordpiece_tokenizer import CachedWordpieceTokenizer  # pylint: disable=g-import-not-at-top

  try:
    CachedWordpieceTokenizer.from_vocab_file(config.vocab_file, config.lower_case)
  except UserError as e:
    if config.vocab_file in str(e):
      raise
    raise UserError(f"{config.vocab_file}: {e}") from None


# Documents the tokenizer step dropped for having too few sentences (see tokenize_documents.py).
_SHORT_DOCUMENT_REASONS = ("empty_document", "one_sentence_document", "short_document")


def check_has_instances(config: PretrainingDataConfig, summary: dict) -> None:
  """A run without instances is a UserError before publishing: an earlier run's shards stay."""
  if summary["instances"]:
    return
  short = sum(summary["dropped"].get(reason, 0) for reason in _SHORT_DOCUMENT_REASONS)
  documents = summary["documents"] + short
  note = beam_metrics.undecodable_note(summary["dropped"], summary.get("first_dropped", {}))
  raise UserError(
      f"no pretraining instances from {config.input_files}: {documents} documents read, "
      f"{summary['documents']} with at least min_sentences_per_document="
      f"{config.min_sentences_per_document} sentences (--input_format={config.input_format})"
      + (f"; {note}" if note else ""))
