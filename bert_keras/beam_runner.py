"""Local defaults for Beam's runner options, shared by the data scripts and the Beam components.

Without a --runner, Beam's DirectRunner first tries Prism, whose binary it downloads at run time;
nothing here may download, so the default is the local FnApiRunner, multi-process on all cores.
Other runners (Dataflow, Flink, ...) pass through untouched. Imports no Beam until asked.
"""

from __future__ import annotations

import importlib
import os
from typing import List, Optional, Sequence

from bert_keras.errors import UserError

# Runners that run the pipeline in this process or its workers (None: no --runner given).
LOCAL_RUNNERS = (None, "DirectRunner", "direct", "BundleBasedDirectRunner", "SwitchingDirectRunner",
                 "FnApiRunner", "PrismRunner")
# What Beam's DataflowRunner imports when it runs (google-cloud clients, apitools).
DATAFLOW_CLIENT_MODULE = "apache_beam.runners.dataflow.internal.apiclient"


def _has_option(beam_args: Sequence[str], name: str) -> bool:
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
  """`beam_args` (changed in place, and returned): --runner=FnApiRunner first when none is given;
  a local runner runs multi-process on all cores unless --direct_running_mode /
  --direct_num_workers say otherwise (in_memory: one worker, all it can use)."""
  runner = option_value(beam_args, "runner")
  if runner is None:
    beam_args.insert(0, "--runner=FnApiRunner")
  if runner in LOCAL_RUNNERS:
    if not _has_option(beam_args, "direct_running_mode"):
      beam_args.append("--direct_running_mode=multi_processing")
    if not _has_option(beam_args, "direct_num_workers"):
      in_memory = option_value(beam_args, "direct_running_mode") == "in_memory"
      beam_args.append(f"--direct_num_workers={1 if in_memory else os.cpu_count() or 1}")
  return beam_args


def local_beam_args(args: Sequence[str]) -> list[str]:
  """The Beam components' options: a copy of `args` with the local defaults, after
  `check_runner_available`."""
  check_runner_available(args)
  return with_local_runner_defaults(list(args))


def check_runner_available(beam_args: Sequence[str]) -> None:
  """UserError when --runner names Dataflow (any name containing "dataflow", as Beam matches it)
  and Beam's GCP extras are missing: Beam would fail only when the run starts, with a bare
  ImportError, after inputs were read and staging was made."""
  runner = option_value(beam_args, "runner")
  if runner is None or "dataflow" not in runner.lower():
    return
  missing = dataflow_runner_missing()
  if missing:
    from apache_beam import version  # pylint: disable=g-import-not-at-top
    raise UserError(
        f"--runner={runner}: Beam's Google Cloud Dataflow runner is not available ({missing}); "
        f'install Beam\'s GCP extras: pip install "apache-beam[gcp]=={version.__version__}"')


def dataflow_runner_missing() -> str | None:
  """The ImportError of DATAFLOW_CLIENT_MODULE, or None when Beam's GCP extras are installed."""
  try:
    importlib.import_module(DATAFLOW_CLIENT_MODULE)
  except ImportError as e:
    return str(e)
  return None
