"""Beam options for the Beam components: the run's --beam_pipeline_args plus local defaults.

Without a --runner, Beam 2.77's DirectRunner first tries the Prism runner, whose binary it downloads
from GitHub at run time (and falls back when there is no network). The pipeline must never
download anything, so the default here is the DirectRunner's own local engine, FnApiRunner, with
one worker process per core, as the data library's scripts use. An explicit --runner (Dataflow,
Flink, Spark, DirectRunner, ...) is passed through untouched.
"""

from __future__ import annotations

import os
from typing import Sequence


def _has(args: Sequence[str], name: str) -> bool:
  return any(a == f"--{name}" or a.startswith(f"--{name}=") for a in args)


def local_beam_args(args: Sequence[str]) -> list[str]:
  args = list(args)
  if not _has(args, "runner"):
    args.append("--runner=FnApiRunner")
    if not _has(args, "direct_running_mode"):
      args.append("--direct_running_mode=multi_processing")
      if not _has(args, "direct_num_workers"):
        args.append(f"--direct_num_workers={os.cpu_count() or 1}")
  return args
