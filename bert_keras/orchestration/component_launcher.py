"""Runs one component execution (cache check, executor, atomic publishing), the same under the
pipeline runner and as an orchestrator's container step.

The cache key: sha256 of the spec and its VERSION, the resolved parameters, the input artifacts'
metadata and the files `is_path` parameters name. A re-produced input has a new creation time, so
everything downstream of a changed component reruns, and nothing else.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import time
import traceback
from typing import Any, Mapping, Optional

from bert_keras.atomic_io import new_stage, replace_dir
from bert_keras.errors import UserError
from bert_keras.orchestration.artifact import Artifact
from bert_keras.orchestration.base_executor import ExecutionContext

CACHED, SUCCEEDED, FAILED, NOT_RUN = "cached", "succeeded", "failed", "not_run"


def path_signature(path: str) -> list:
  """[relative path, size, mtime_ns] of a file or of every file under a directory."""
  if os.path.isfile(path):
    st = os.stat(path)
    return [[os.path.basename(path), st.st_size, st.st_mtime_ns]]
  if os.path.isdir(path):
    out = []
    for root, dirs, files in os.walk(path):
      dirs.sort()
      for name in sorted(files):
        full = os.path.join(root, name)
        st = os.stat(full)
        out.append([os.path.relpath(full, path), st.st_size, st.st_mtime_ns])
    return out
  return [[path, "missing"]]


def strings_in(value: Any) -> list[str]:
  """The non-empty strings in `value` and in the lists, tuples and dicts nested in it, in order."""
  if isinstance(value, str):
    return [value] if value else []
  if isinstance(value, (list, tuple)):
    return [p for v in value for p in strings_in(v)]
  if isinstance(value, dict):
    return [p for v in value.values() for p in strings_in(v)]
  return []


def execution_fingerprint(spec_class, parameters: Mapping[str, Any],
                          inputs: Mapping[str, Artifact]) -> str:
  files = {}
  for name, param in spec_class.PARAMETERS.items():
    if param.is_path:
      files[name] = [path_signature(p) for p in strings_in(parameters.get(name))]
  key = {
      "spec": spec_class.type_name(),
      "version": spec_class.VERSION,
      "parameters": parameters,
      "inputs": {name: a.content_fingerprint() for name, a in sorted(inputs.items())
                 if a is not None},
      "files": files,
  }
  blob = json.dumps(key, sort_keys=True, default=str).encode("utf-8")
  return hashlib.sha256(blob).hexdigest()


@dataclasses.dataclass
class ExecutionResult:
  status: str
  fingerprint: str = ""
  outputs: dict = dataclasses.field(default_factory=dict)  # name -> Artifact (final uri)
  duration_s: float = 0.0
  error: str = ""
  exception: Optional[BaseException] = None
  traceback: str = ""


def error_text(e: BaseException) -> str:
  """A failed execution's report: a UserError by its message, a bug with its class name first."""
  message = str(e)
  if isinstance(e, UserError) and message:
    return message
  return f"{type(e).__name__}: {message}" if message else type(e).__name__


class ComponentLauncher:
  """Launches `spec_class` as `name` on input artifacts into `output_uris`: skipped when every
  output has the same fingerprint (unless forced); runtime options refused before anything is
  read; outputs staged and renamed into place only on success."""

  def __init__(self, spec_class, name: str, inputs: Mapping[str, Optional[Artifact]],
               output_uris: Mapping[str, str], parameters: Mapping, *,
               context: Optional[ExecutionContext] = None):
    self.spec_class = spec_class
    self.name = name
    self.inputs = {k: v for k, v in inputs.items() if v is not None}
    self.output_uris = dict(output_uris)
    self.parameters = spec_class.resolve_parameters(parameters, where=name)
    spec_class.check_inputs(self.inputs, where=name)
    missing = sorted(set(spec_class.OUTPUTS) - set(self.output_uris))
    if missing:
      raise ValueError(f"{name}: no output uri for {missing}")
    self.context = dataclasses.replace(context or ExecutionContext(), component_name=name)
    if not spec_class.USES_BEAM:
      self.context.beam_pipeline_args = ()
    spec_class.check_runtime_options(self.context.beam_pipeline_args)
    self.fingerprint = execution_fingerprint(spec_class, self.parameters, self.inputs)

  def cached_outputs(self) -> Optional[dict]:
    """The outputs of an earlier identical execution, or None."""
    outputs = {}
    for out_name, out_type in self.spec_class.OUTPUTS.items():
      uri = self.output_uris[out_name]
      if not Artifact.exists(uri):
        return None
      try:
        artifact = out_type.load(uri)
      except Exception:  # A corrupt or foreign artifact is simply not a cache hit.
        return None
      if artifact.fingerprint != self.fingerprint:
        return None
      outputs[out_name] = artifact
    return outputs

  def launch(self, force: bool = False) -> ExecutionResult:
    start = time.time()
    if not force:
      cached = self.cached_outputs()
      if cached is not None:
        return ExecutionResult(CACHED, self.fingerprint, cached, time.time() - start)

    staged: dict[str, Artifact] = {}
    tmp_dir = ""
    try:
      for out_name, out_type in self.spec_class.OUTPUTS.items():
        artifact = out_type(new_stage(self.output_uris[out_name]))
        artifact.producer = self.name
        artifact.parameters = self.parameters
        artifact.input_fingerprints = {k: a.content_fingerprint() for k, a in self.inputs.items()}
        artifact.fingerprint = self.fingerprint
        staged[out_name] = artifact
      parent = os.path.dirname(os.path.abspath(next(iter(self.output_uris.values()), ".")))
      tmp_dir = tempfile.mkdtemp(prefix=f".tmp-{self.name}-", dir=parent)
      self.context.tmp_dir = tmp_dir
      executor = self.spec_class.executor_class()(self.context)
      executor.run(self.inputs, staged, self.parameters)
      now = time.time()
      for artifact in staged.values():
        artifact.created = now
        artifact.write_metadata()
      published = {}
      for name, artifact in staged.items():
        replace_dir(artifact.uri, self.output_uris[name])
        published[name] = type(artifact)(self.output_uris[name], artifact.to_metadata())
      return ExecutionResult(SUCCEEDED, self.fingerprint, published, time.time() - start)
    except Exception as e:  # pylint: disable=broad-except
      return ExecutionResult(FAILED, self.fingerprint, {}, time.time() - start,
                             error=error_text(e), exception=e, traceback=traceback.format_exc())
    finally:
      for artifact in staged.values():
        if ".staging-" in artifact.uri:  # a stage not published
          shutil.rmtree(artifact.uri, ignore_errors=True)
      if tmp_dir:
        shutil.rmtree(tmp_dir, ignore_errors=True)
