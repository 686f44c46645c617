"""Local defaults for Beam's runner options, shared by the data scripts and the Beam components.

Without a --runner, Beam 2.77's DirectRunner first tries the Prism runner, whose binary it downloads
from GitHub at run time. Nothing here may download at run time, so the default is the DirectRunner's
own local engine (FnApiRunner), multi-process on all cores. A local runner named explicitly
(DirectRunner, FnApiRunner) gets the same multi-process defaults; any other runner (Dataflow,
Flink, ...) is passed through untouched. Beam-free, so callers can build options before importing it
(`check_runner_available` imports the part of Beam the named runner needs, when called).
"""

from __future__ import annotations

import importlib
import os
from typing import List, Optional, Sequence

from bert_keras.errors import UserError

# Runners that run the pipeline in this process or its workers (None: no --runner given).
LOCAL_RUNNERS = (None, "DirectRunner", "direct", "BundleBasedDirectRunner", "SwitchingDirectRunner",
                 "FnApiRunner", "PrismRunner")


def has_option(beam_args: Sequence[str], name: str) -> bool:
  """Whether `--name` or `--name=value` is among `beam_args`."""
  return any(a == f"--{name}" or a.startswith(f"--{name}=") for a in beam_args)


def option_value(beam_args: Sequence[str], name: str) -> Optional[str]:
  """The value of `--name=value` or `--name value` in `beam_args`, None when absent."""
  for i, a in enumerate(beam_args):
    if a.startswith(f"--{name}="):
      return a.split("=", 1)[1]
    if a == f"--{name}" and i + 1 < len(beam_args):
      return beam_args[i + 1]
  return None


def with_local_runner_defaults(beam_args: List[str]) -> List[str]:
  """`beam_args` (changed in place, and returned) with the local defaults: --runner=FnApiRunner
  first when no runner is given; for a local runner, multi-process on all cores unless
  --direct_running_mode / --direct_num_workers say otherwise. An in_memory mode runs one worker
  (Beam warns when in_memory is given more, which it cannot use)."""
  runner = option_value(beam_args, "runner")
  if runner is None:
    beam_args.insert(0, "--runner=FnApiRunner")
  if runner in LOCAL_RUNNERS:
    if not has_option(beam_args, "direct_running_mode"):
      beam_args.append("--direct_running_mode=multi_processing")
    if not has_option(beam_args, "direct_num_workers"):
      in_memory = option_value(beam_args, "direct_running_mode") == "in_memory"
      beam_args.append(f"--direct_num_workers={1 if in_memory else os.cpu_count() or 1}")
  return beam_args


def check_runner_available(beam_args: Sequence[str]) -> None:
  """UserError when --runner names Dataflow (as Beam matches it: any runner name containing
  "dataflow") and Beam's GCP extras, which the pinned install leaves out, are missing.

  Beam itself finds out only when the pipeline runs, with a bare ImportError, after the script has
  read its inputs and made its output's staging directory; this is checked first and names the
  install command for the installed Beam version.
  """
  runner = option_value(beam_args, "runner")
  if runner is None or "dataflow" not in runner.lower():
    return
  missing = dataflow_runner_missing()
  if missing:
    from apache_beam import version  # pylint: disable=g-import-not-at-top
    raise UserError(
        f"--runner={runner}: Beam's Google Cloud Dataflow runner is not available ({missing}); "
        f'install Beam\'s GCP extras: pip install "apache-beam[gcp]=={version.__version__}"')


# What Beam's DataflowRunner imports when it runs (google-cloud clients, apitools).
DATAFLOW_CLIENT_MODULE = "apache_beam.runners.dataflow.internal.apiclient"


def dataflow_runner_missing() -> str | None:
  """Why Beam's DataflowRunner cannot run here (the ImportError of DATAFLOW_CLIENT_MODULE), or None
  when Beam's GCP extras are installed."""
  try:
    importlib.import_module(DATAFLOW_CLIENT_MODULE)
  except ImportError as e:
    return str(e)
  return None
