"""Beam defaults of the Beam components: never the Prism download, explicit runners untouched."""

import os

from components.base.beam_options import local_beam_args


def test_default_is_local_fnapi_runner_on_all_cores():
  assert local_beam_args([]) == ["--runner=FnApiRunner", "--direct_running_mode=multi_processing",
                                 f"--direct_num_workers={os.cpu_count() or 1}"]


def test_user_choices_are_kept():
  assert local_beam_args(["--direct_running_mode=in_memory"]) == [
      "--runner=FnApiRunner", "--direct_running_mode=in_memory", "--direct_num_workers=1"]
  assert local_beam_args(["--direct_num_workers=1"])[-1] == "--direct_running_mode=multi_processing"
  explicit = ["--runner=DataflowRunner", "--project=p"]
  assert local_beam_args(explicit) == explicit
