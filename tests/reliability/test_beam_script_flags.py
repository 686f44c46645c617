"""The command line of the Beam scripts (create_pretraining_data, learn_vocab): a misspelt flag is
refused with the closest flag named instead of being passed to Beam and ignored; Beam's own options
still pass; the boolean switches work bare as the README shows them; --helpfull prints the help."""

import pytest

from tests.reliability import bad_inputs as B


def test_misspelt_flag_of_create_pretraining_data_names_the_close_flag(tmp_path):
  B.user_error_line(B.run_script("create_pretraining_data", f"--output_dir={tmp_path}/out",
                                 "--dupe_factr=2"),
                    "'--dupe_factr=2'", "did you mean --dupe_factor?")
  assert not (tmp_path / "out").exists()


def test_misspelt_flag_of_learn_vocab_names_the_close_flag(tmp_path):
  B.user_error_line(B.run_script("learn_vocab", f"--output_dir={tmp_path}/out", "--vocab_sise", "90"),
                    "'--vocab_sise'", "did you mean --vocab_size?")


@pytest.mark.parametrize("module", ["pretraining_data_pipeline", "wordpiece_vocab_pipeline"])
def test_unknown_and_beam_arguments_in_process(module):
  import importlib  # pylint: disable=g-import-not-at-top

  parse_args = importlib.import_module(f"bert_keras.data.{module}").parse_args
  _, beam_args = parse_args(["--output_dir=out", "--runner=DirectRunner", "--direct_num_workers=1",
                             "--temp_location=/tmp/beam", "--project", "p", "--save_main_session"])
  assert "--temp_location=/tmp/beam" in beam_args and "--save_main_session" in beam_args
  B.raises(lambda: parse_args(["--output_dir=out", "--lower_cas=false"]),
           "'--lower_cas=false'", "did you mean --lower_case?")
  B.raises(lambda: parse_args(["--output_dir=out", "stray"]), "'stray'")
  # A remote runner forwards options no Python class defines (Dataflow's service, Flink's jar);
  # a misspelling of our own flags is refused there too.
  _, beam_args = parse_args(["--output_dir=out", "--runner=DataflowRunner", "--someServiceOption=1"])
  assert "--someServiceOption=1" in beam_args
  B.raises(lambda: parse_args(["--output_dir=out", "--runner=DataflowRunner", "--lower_cas=no"]),
           "did you mean --lower_case?")


def test_bool_switches_bare_or_with_a_value():
  from bert_keras.data import pretraining_data_pipeline, wordpiece_vocab_pipeline  # pylint: disable=g-import-not-at-top

  known, _ = pretraining_data_pipeline.parse_args(
      ["--output_dir=out", "--whole_word_mask", "--lower_case"])
  assert known.whole_word_mask is True and known.lower_case is True  # the config's field names
  known, _ = pretraining_data_pipeline.parse_args(
      ["--output_dir=out", "--whole_word_mask", "false", "--lower_case=no"])
  assert known.whole_word_mask is False and known.lower_case is False
  known, _ = wordpiece_vocab_pipeline.parse_args(["--lower_case", "--output_dir=out"])
  assert known.lower_case is True


@pytest.mark.parametrize("script", ["create_pretraining_data", "learn_vocab"])
def test_helpfull_prints_the_help(script):
  result = B.run_script(script, "--helpfull")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "--output_dir" in result.stdout and "usage:" in result.stdout
