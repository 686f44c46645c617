"""Each component CLI documents its own spec, and README's component table is that spec.

`--help` must name every input and output artifact and every parameter with its type, default and
meaning, so that nobody has to read spec.py to run a component alone; names the spec does not
declare are errors naming the declared ones. README's table is `spec_help.markdown_table` of the
nine specs: when a spec changes, paste the expected table this test prints into README.md.
"""

import json
import os
import subprocess
import sys

from bert_keras.orchestration.spec_help import markdown_table
from components.cli import SPECS, spec_class
from components.checkpoint_importer.spec import CheckpointImporterSpec
from components.corpus_ingestion.spec import CorpusIngestionSpec
from components.evaluator.spec import EvaluatorSpec
from components.exporter.spec import ExporterSpec
from components.fine_tuner.spec import FineTunerSpec
from components.pretrainer.spec import PretrainerSpec
from components.pretraining_examples.spec import PretrainingExamplesSpec
from components.pusher.spec import PusherSpec
from components.vocabulary.spec import VocabularySpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# In pipeline order (pipeline/definitions.py).
COMPONENTS = (
    ("corpus_ingestion", CorpusIngestionSpec),
    ("vocabulary", VocabularySpec),
    ("pretraining_examples", PretrainingExamplesSpec),
    ("pretrainer", PretrainerSpec),
    ("checkpoint_importer", CheckpointImporterSpec),
    ("fine_tuner", FineTunerSpec),
    ("evaluator", EvaluatorSpec),
    ("exporter", ExporterSpec),
    ("pusher", PusherSpec),
)


def _run_cli(component, *args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=ROOT)
  return subprocess.run([sys.executable, "-m", "components.cli", component, *args], cwd=ROOT,
                        env=env, capture_output=True, text=True, timeout=240)


def _error_line(result, *needles):
  """Exit 2, no traceback, one `error:` line holding every needle."""
  detail = f"exit {result.returncode}; stderr tail:\n{result.stderr[-3000:]}"
  assert result.returncode == 2 and "Traceback" not in result.stderr, detail
  last = result.stderr.strip().splitlines()[-1]
  assert last.startswith("error: "), detail
  for needle in needles:
    assert needle in last, (needle, last)
  return last


def test_the_list_holds_every_component():
  on_disk = sorted(name for name in os.listdir(os.path.join(ROOT, "components"))
                   if os.path.isfile(os.path.join(ROOT, "components", name, "spec.py")))
  assert sorted(name for name, _ in COMPONENTS) == on_disk
  # The one CLI knows each by its name, in the same order.
  assert [(name, spec_class(name)) for name in SPECS] == list(COMPONENTS)


def test_the_one_cli_runs_a_component_by_name():
  """`python -m components.cli NAME` runs one component; a wrong NAME is one line."""
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=ROOT)
  run = lambda *args: subprocess.run([sys.executable, "-m", "components.cli", *args], cwd=ROOT,
                                     env=env, capture_output=True, text=True, timeout=240)
  result = run("pusher", "--help")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "serving_dir (str, required)" in result.stdout and "--[no]force:" in result.stdout
  _error_line(run("pushr", "--help"), "unknown component 'pushr'", "'pusher'")
  _error_line(run(), "python -m components.cli NAME", "'vocabulary'")
  _error_line(run("--force"), "python -m components.cli NAME", "'vocabulary'")
  usage = run("--help")  # asked for: the usage on stdout, exit 0
  assert usage.returncode == 0 and "python -m components.cli NAME" in usage.stdout, usage


def _sections(help_text):
  """{"inputs": [lines], "outputs": [...], "parameters": [...]} of a component's --help."""
  sections, current = {}, None
  for line in help_text.splitlines():
    header = line.split(" (", 1)[0]
    if header in ("inputs", "outputs", "parameters") and not line.startswith(" "):
      current = sections.setdefault(header, [])
    elif current is not None and line.startswith("  "):
      current.append(line)
    else:
      current = None
  return sections


def test_help_lists_inputs_outputs_and_parameters():
  for component, spec in COMPONENTS:
    result = _run_cli(component, "--help")
    assert result.returncode == 0, (component, result.stderr[-2000:])
    sections = _sections(result.stdout)

    def line_of(section, name, component=component, sections=sections):
      found = [line for line in sections.get(section, []) if line.startswith(f"  {name} (")]
      assert found, f"{component} --help lists no {section[:-1]} {name!r}; it says:\n{sections}"
      return found[0]

    for name, input_spec in spec.INPUTS.items():
      assert f"({input_spec.type.TYPE_NAME}, required)" in line_of("inputs", name)
    for name, artifact_type in spec.OUTPUTS.items():
      assert f"({artifact_type.TYPE_NAME})" in line_of("outputs", name)
    for name, param in spec.PARAMETERS.items():
      line = line_of("parameters", name)
      default = "required" if param.required else f"default {json.dumps(param.default)}"
      assert line.startswith(f"  {name} ({param.type.__name__}, {default}"), line
      assert param.doc and line.endswith(f"): {param.doc}"), (component, line)
    # The generic flags are listed too, not only under --helpfull.
    assert "--param:" in result.stdout and "--[no]force:" in result.stdout, component


def test_help_keeps_percent_signs():
  """absl formats the help text with `%`: the spec's "15% of tokens" must survive it."""
  result = _run_cli("pretraining_examples", "--help")
  assert result.returncode == 0, result.stderr[-2000:]
  assert "15% of tokens" in result.stdout and "%%" not in result.stdout


def test_unknown_parameter_names_the_valid_ones(tmp_path):
  last = _error_line(_run_cli("vocabulary", f"--output_artifact=vocabulary={tmp_path / 'vocab'}",
                              "--param=vocab_sise=100"), "unknown parameters ['vocab_sise']")
  for name in VocabularySpec.PARAMETERS:
    assert repr(name) in last, (name, last)
  assert not os.listdir(tmp_path)


def test_names_are_checked_before_any_input_is_read(tmp_path):
  """A misspelt parameter is reported as such, not as the (also wrong) input directory."""
  _error_line(_run_cli("vocabulary", f"--input_artifact=corpus={tmp_path / 'missing'}",
                       f"--output_artifact=vocabulary={tmp_path / 'vocab'}", "--param=vocab_sise=100"),
              "unknown parameters ['vocab_sise']", "'vocab_size'")
  _error_line(_run_cli("vocabulary", f"--input_artifact=corpus={tmp_path / 'missing'}",
                       f"--output_artifact=vocabulary={tmp_path / 'vocab'}", f"--output_artifact=vocab={tmp_path}/v"),
              "--output_artifact vocab", "expected one of ['vocabulary']")
  assert not os.listdir(tmp_path)


def test_unknown_input_or_output_names_the_valid_ones(tmp_path):
  _error_line(_run_cli("vocabulary", f"--input_artifact=corpus_dir={tmp_path}",
                       f"--output_artifact=vocabulary={tmp_path / 'vocab'}"),
              "--input_artifact corpus_dir", "expected one of ['corpus']")
  _error_line(_run_cli("corpus_ingestion", f"--input_artifact=corpus={tmp_path}",
                       f"--output_artifact=corpus={tmp_path / 'corpus'}"), "--input_artifact corpus", "takes none")
  # An undeclared output was ignored: the component ran and the misspelt directory stayed empty.
  _error_line(_run_cli("corpus_ingestion", f"--output_artifact=corpus={tmp_path / 'corpus'}",
                       f"--output_artifact=corpus_2={tmp_path / 'corpus_2'}"),
              "--output_artifact corpus_2", "expected one of ['corpus']")
  assert not os.listdir(tmp_path)


def test_readme_component_table_matches_the_specs():
  table = markdown_table(COMPONENTS)
  with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    readme = f.read()
  assert table in readme, f"README.md's component table is out of date; expected:\n{table}"
