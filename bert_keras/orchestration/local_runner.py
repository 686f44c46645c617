"""Runs a pipeline in this process, in dependency order, with caching: checked as a whole first; a
failed component stops the run (later ones `not_run`, earlier artifacts kept for the cache); the
record is printed and written as JSON and HTML under `<root>/runs/<run_id>/`."""

from __future__ import annotations

import os
import time
from typing import Callable, Iterable, Sequence, Union

from bert_keras.beam_runner import check_runner_available
from bert_keras.errors import UserError
from bert_keras.orchestration.base_executor import ExecutionContext, print_log
from bert_keras.orchestration.component import Channel
from bert_keras.orchestration.component_launcher import FAILED, NOT_RUN, ComponentLauncher, ExecutionResult
from bert_keras.orchestration.pipeline import Pipeline
from bert_keras.orchestration.run_record import ComponentRecord, RunRecord
from bert_keras.orchestration.run_report import write_html_report


class PipelineRunError(UserError):
  """A component failed; `record` holds the run record (with the failed component's error)."""

  def __init__(self, message: str, record: RunRecord):
    super().__init__(message)
    self.record = record


def _new_run_id(root: str) -> str:
  base = time.strftime("%Y%m%d-%H%M%S")
  run_id, n = base, 1
  while os.path.exists(os.path.join(root, "runs", run_id)):
    n += 1
    run_id = f"{base}-{n}"
  return run_id


class LocalRunner:
  """force: False (use the cache), True (rerun all) or the names to rerun (with what follows them)."""

  def __init__(self, beam_pipeline_args: Sequence[str] = (), distribution_strategy: str = "default",
               force: Union[bool, Iterable[str]] = False, write_report: bool = True,
               log_fn: Callable[[str], None] = print_log):
    self.beam_pipeline_args = list(beam_pipeline_args)
    self.distribution_strategy = distribution_strategy
    self.force = force if isinstance(force, bool) else frozenset(force)
    self.write_report = write_report
    self.log_fn = log_fn

  def check(self, pipeline: Pipeline) -> None:
    """UserError, before anything is written, when --force names an unknown component or any
    component, cached ones too, refuses its runtime options (the message its CLI would give)."""
    if not isinstance(self.force, bool):
      unknown = sorted(set(self.force) - {c.name for c in pipeline.components})
      if unknown:
        raise UserError(f"--force names unknown components {unknown}; pipeline has "
                        f"{[c.name for c in pipeline.components]}")
    check_runner_available(self.beam_pipeline_args)
    for component in pipeline.ordered():
      component.spec_class.check_runtime_options(self.beam_pipeline_args)

  def run(self, pipeline: Pipeline) -> RunRecord:
    self.check(pipeline)
    order = pipeline.ordered()
    record = RunRecord(pipeline=pipeline.name, run_id=_new_run_id(pipeline.pipeline_root),
                       pipeline_root=pipeline.pipeline_root, started=time.time())
    produced = {}  # (component name, output name) -> Artifact
    failure = None
    for i, component in enumerate(order, 1):
      spec_name = component.spec_class.__name__
      if failure is not None:
        record.components.append(ComponentRecord(component.name, spec_name, NOT_RUN))
        continue
      prefix = f"[{i}/{len(order)}] {component.name}"
      inputs = {key: produced[(value.producer.name, value.output_name)]
                if isinstance(value, Channel) else value
                for key, value in component.inputs.items()}
      context = ExecutionContext(beam_pipeline_args=self.beam_pipeline_args,
                                 distribution_strategy=self.distribution_strategy,
                                 log_fn=self.log_fn)
      try:
        launcher = ComponentLauncher(
            component.spec_class, component.name, inputs,
            {out: pipeline.output_uri(component, out) for out in component.spec_class.OUTPUTS},
            component.parameters, context=context)
      except UserError as e:
        result = ExecutionResult(FAILED, error=str(e), exception=e)
      else:
        forced = self.force if isinstance(self.force, bool) else component.name in self.force
        if launcher.cached_outputs() is None or forced:
          self.log_fn(f"{prefix}: running{' (forced)' if forced else ''} ...")
        result = launcher.launch(force=forced)
      entry = ComponentRecord(component.name, spec_name, result.status, duration_s=result.duration_s,
                              fingerprint=result.fingerprint, error=result.error)
      for out, artifact in result.outputs.items():
        produced[(component.name, out)] = artifact
        entry.artifacts[out] = {"uri": artifact.uri, "type": artifact.TYPE_NAME}
        entry.metrics.update({f"{out}/{k}": v for k, v in artifact.metrics.items()})
        entry.curves.update({f"{out}/{k}": v for k, v in artifact.curves.items()})
        entry.properties.update({f"{out}/{k}": v for k, v in artifact.properties.items()})
      record.components.append(entry)
      if result.status == FAILED:
        if result.traceback and not isinstance(result.exception, UserError):
          self.log_fn(result.traceback.rstrip())
        self.log_fn(f"{prefix}: FAILED: {result.error}")
        failure = entry
      else:
        self.log_fn(f"{prefix}: {result.status} in {entry.duration_s:.1f}s")

    record.finished = time.time()
    record.status = "failed" if failure else "succeeded"
    self._write(record)
    if failure is not None:
      raise PipelineRunError(
          f"component {failure.name} failed: {failure.error} (artifacts of the components before "
          f"it are kept under {pipeline.pipeline_root}; rerun to continue from the cache)", record)
    return record

  def _write(self, record: RunRecord) -> None:
    report_dir = os.path.join(record.pipeline_root, "runs", record.run_id)
    os.makedirs(report_dir, exist_ok=True)
    record.report_dir = report_dir
    record.write_json(os.path.join(report_dir, "run_record.json"))
    if self.write_report:
      write_html_report(record, report_dir)
    print(record.format_table(), flush=True)
    self.log_fn(f"run record: {os.path.join(report_dir, 'run_record.json')}"
                + (f", report: {os.path.join(report_dir, 'report.html')}" if self.write_report else ""))
