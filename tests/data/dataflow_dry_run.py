"""Translates every Beam pipeline of the library for Dataflow with Beam's `--dry_run` (the job is
built, its options validated, its DoFns pickled and the package of --setup_file built; nothing is
uploaded or submitted), in a process that imports the library alone. Run by
tests/data/test_dataflow_translation.py with only the library's sources on the path (not
components/, pipeline/ or configs/), as a Dataflow worker holding the wheel has:

  python -P dataflow_dry_run.py WORK_DIR SETUP_FILE

prints one JSON line: the application modules this process could import, and per pipeline its
step names, the files the job stages and every module its pickles (DoFns, CombineFns, coders,
transforms, the main session) import when a worker loads them. A connection or name lookup
beyond 127.0.0.1 ends the run with an error at once.
"""

import base64
import bz2
import importlib.util
import io
import json
import os
import pickle
import socket
import sys
import zlib


def _refuse_network() -> None:
  """Makes every socket connection and name lookup outside the loopback end the run."""
  connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo
  is_local = lambda host: str(host).startswith("127.") or host in ("localhost", "::1")

  def guarded_connect(sock, address):
    if sock.family != socket.AF_UNIX and not is_local(address[0]):
      raise SystemExit(f"dataflow_dry_run: a connection to {address} was attempted")
    return connect(sock, address)

  def guarded_getaddrinfo(host, *args, **kwargs):
    if not is_local(host):
      raise SystemExit(f"dataflow_dry_run: a name lookup of {host} was attempted")
    return getaddrinfo(host, *args, **kwargs)

  socket.socket.connect = guarded_connect
  socket.getaddrinfo = guarded_getaddrinfo


def _pickles(proto) -> list:
  """Every pickle a worker loads: the job's DoFns, CombineFns, transforms and coders (Beam's
  pickler: base64 of bz2 or zlib; a coder's payload has "ClassName$" before it), and the staged
  main session (the pickle itself)."""
  from apache_beam.portability import common_urns  # pylint: disable=g-import-not-at-top
  from apache_beam.portability.api import beam_runner_api_pb2  # pylint: disable=g-import-not-at-top

  combines = {common_urns.composites.COMBINE_PER_KEY.urn,
              common_urns.composites.COMBINE_GLOBALLY.urn}
  specs = [c.spec for c in proto.components.coders.values()]
  specs += [w.window_fn for w in proto.components.windowing_strategies.values()]
  for transform in proto.components.transforms.values():
    specs.append(transform.spec)
    if transform.spec.urn == common_urns.primitives.PAR_DO.urn:
      specs.append(beam_runner_api_pb2.ParDoPayload.FromString(transform.spec.payload).do_fn)
    elif transform.spec.urn in combines:
      specs.append(beam_runner_api_pb2.CombinePayload.FromString(transform.spec.payload).combine_fn)
  pickles = []
  for spec in specs:
    if "pickled_python" in spec.urn and spec.payload:
      data = base64.b64decode(spec.payload.split(b"$", 1)[-1])
      pickles.append(bz2.decompress(data) if data.startswith(b"BZh") else zlib.decompress(data))
  for path, name in _staged(proto):
    if name == "pickled_main_session":
      with open(path, "rb") as f:
        pickles.append(f.read())
  return pickles


def _imported_modules(pickles) -> set:
  """The modules that loading `pickles` imports: those of its classes and functions, and those
  cloudpickle's `subimport` imports for a function's globals."""
  modules = set()

  class Recording(pickle.Unpickler):

    def find_class(self, module, name):
      modules.add(module)
      found = super().find_class(module, name)
      if name == "subimport":
        return lambda imported: (modules.add(imported), found(imported))[1]
      return found

  for data in pickles:
    Recording(io.BytesIO(data)).load()
  return modules


def _staged(proto) -> list:
  """(local path, staged name) of every file the job stages for its workers."""
  from apache_beam.portability.api import beam_runner_api_pb2  # pylint: disable=g-import-not-at-top

  return [(beam_runner_api_pb2.ArtifactFilePayload.FromString(a.type_payload).path,
           beam_runner_api_pb2.ArtifactStagingToRolePayload.FromString(a.role_payload).staged_name)
          for env in proto.components.environments.values() for a in env.dependencies]


def main(work_dir: str, setup_file: str) -> None:
  _refuse_network()
  # pylint: disable=g-import-not-at-top
  import apache_beam as beam
  from apache_beam.options.pipeline_options import PipelineOptions

  from bert_keras import resources
  from bert_keras.configs.pretraining_data import PretrainingDataConfig
  from bert_keras.data import corpus_ingestion, pretraining_data_pipeline, wordpiece_vocab_pipeline
  from bert_keras.data.beam_args import parse_vocab_args

  options = ["--runner=DataflowRunner", "--project=my-project", "--region=us-central1",
             "--temp_location=gs://my-bucket/tmp", "--dry_run=True", f"--setup_file={setup_file}",
             # Beam would otherwise run `pip download` of its own requirements and `pip freeze`.
             "--requirements_cache=skip", "--experiments=disable_logging_submission_environment"]
  lines, wiki = resources.lee_background_path(), resources.wikipedia_dump_path()
  out = lambda name: os.path.join(work_dir, name)
  builders = {
      "corpus_ingestion": lambda p: corpus_ingestion.build_pipeline(p, dict(
          wikipedia_dumps=[wiki], bert_text_corpora=[lines], line_corpora=[lines],
          max_documents=10, num_shards=2), out("corpus/corpus")),
      "vocabulary": lambda p: wordpiece_vocab_pipeline.build_corpus_pipeline(
          p, lines, out("vocabulary"),
          dict(vocab_size=200, lower_case=True, num_unused=9, min_count=1, max_input_words=1000)),
      "learn_vocab": lambda p: wordpiece_vocab_pipeline.build_pipeline(p, parse_vocab_args(
          [f"--input_files={lines}", "--input_format=lines", f"--output_dir={out('vocab')}"])[0]),
      "create_pretraining_data": lambda p: pretraining_data_pipeline.build_pipeline(
          p, PretrainingDataConfig(input_files=wiki, input_format="wikipedia",
                                   output_dir=out("pretraining"),
                                   vocab_file=resources.uncased_vocab_path(), num_shards=2)),
  }
  report = {"application": [m for m in ("components", "pipeline", "configs")
                            if importlib.util.find_spec(m) is not None]}
  for name, build in builders.items():
    pipeline = beam.Pipeline(options=PipelineOptions(options))
    build(pipeline)
    proto = pipeline.run().job.proto_pipeline
    report[name] = {"steps": sorted(t.unique_name for t in proto.components.transforms.values()),
                    "staged": sorted(name for _, name in _staged(proto)),
                    "modules": sorted(_imported_modules(_pickles(proto)))}
  print(json.dumps(report))


if __name__ == "__main__":
  main(*sys.argv[1:])
