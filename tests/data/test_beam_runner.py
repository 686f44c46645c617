"""Local Beam runner defaults, shared by the data scripts and the Beam components."""

import os

from bert_keras.beam_runner import local_beam_args, option_value, with_local_runner_defaults

ALL_CORES = f"--direct_num_workers={os.cpu_count() or 1}"


def test_an_explicit_local_runner_gets_the_same_defaults_in_scripts_and_components():
  for runner in ("--runner=DirectRunner", "--runner=FnApiRunner"):
    expected = [runner, "--direct_running_mode=multi_processing", ALL_CORES]
    assert with_local_runner_defaults([runner]) == expected
    assert local_beam_args([runner]) == expected


def test_components_copy_the_args_and_other_runners_pass_through():
  # (DataflowRunner needs Beam's GCP extras, checked first: tests/components/test_beam_options.py.)
  args = ["--runner", "FlinkRunner", "--flink_master=localhost:8081"]
  assert local_beam_args(args) == args and option_value(args, "runner") == "FlinkRunner"
  given = ["--direct_num_workers=1"]
  assert local_beam_args(given) == ["--runner=FnApiRunner", "--direct_num_workers=1",
                                    "--direct_running_mode=multi_processing"]
  assert given == ["--direct_num_workers=1"]


def test_in_memory_mode_defaults_to_one_worker():
  """in_memory runs in this process: Beam warns when it is given more than one worker, so the
  all-cores default applies to the multi-process modes only."""
  for given in (["--direct_running_mode=in_memory"], ["--direct_running_mode", "in_memory"]):
    assert with_local_runner_defaults(list(given)) == [
        "--runner=FnApiRunner", *given, "--direct_num_workers=1"]
  threads = with_local_runner_defaults(["--direct_running_mode=multi_threading"])
  assert threads[-1] == ALL_CORES
  assert with_local_runner_defaults(["--direct_running_mode=in_memory",
                                     "--direct_num_workers=3"])[-1] == "--direct_num_workers=3"
