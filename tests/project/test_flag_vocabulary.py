"""One flag vocabulary: every entry point (scripts/, the component CLI, pipeline/, bench/, studies/)
spells the ideas of README.md's "Flags every script shares" table as the table does, with one type
each, and no entry point takes a retired spelling (there are no aliases)."""

import json
import os
import re
import subprocess
import sys

from bert_keras.input_checks import local_input_files, split_patterns

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Per flag of the table: its one type, and the spellings that meant the same idea before.
SHARED = {
    "output_dir": ("string", {"model_dir", "output", "out", "out_dir"}),
    "output_file": ("string", {"output_json", "answers_file", "output", "out"}),
    "input_files": ("string", {"input_file", "input"}),
    "init_checkpoint": ("string", {"encoder_checkpoint", "pretrained_dir", "input"}),
    "finetuned_dir": ("string", {"finetune_dir"}),
    "model": ("string", {"model_preset", "model_config"}),
    "lower_case": ("bool", {"do_lower_case"}),
    "config_file": ("string", set()),
}
# Aliases the scripts used to keep for renamed flags.
RETIRED_ALIASES = {"distribution", "precision", "row_groups", "nolength_buckets", "random_seed",
                   "config_json"}


def _readme_table() -> dict:
  with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    section = f.read().split("### Flags every script shares", 1)[1].split("\n#", 1)[0]
  return dict(re.findall(r"^\| `--(\w+)` \| (.+) \|$", section, re.MULTILINE))


def _entry_points() -> dict:
  """{entry point: {flag: type}}, listed in one fresh process (tests/project/flag_listing.py)."""
  result = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "project", "flag_listing.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3"))
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout)


def test_every_entry_point_speaks_the_readme_vocabulary():
  table = _readme_table()
  assert set(table) == set(SHARED), "README's table and this test name different flags"
  listed = _entry_points()
  assert len(listed) >= 25 and "scripts/run_finetuning.py" in listed and "components/cli.py" in listed
  retired = {old: new for new, (_, olds) in SHARED.items() for old in olds}
  problems = []
  for entry, defined in sorted(listed.items()):
    for name, kind in sorted(defined.items()):
      if name in retired and name not in SHARED:
        problems.append(f"{entry}: --{name} (the shared name: --{retired[name]})")
      elif name in RETIRED_ALIASES:
        problems.append(f"{entry}: --{name}, a removed alias")
      elif name in SHARED and kind != SHARED[name][0]:
        problems.append(f"{entry}: --{name} is a {kind} flag; everywhere else a {SHARED[name][0]}")
  assert not problems, "\n".join(problems)
  used = {name for defined in listed.values() for name in defined}
  assert set(SHARED) <= used, f"no entry point takes {sorted(set(SHARED) - used)}"


def test_input_files_are_a_comma_list_of_paths_and_globs(tmp_path):
  for name in ("b.jsonl", "a.jsonl", "c.txt"):
    (tmp_path / name).write_text("{}\n")
  value = f"{tmp_path / 'c.txt'}, {tmp_path / '*.jsonl'},"
  assert split_patterns(value) == [str(tmp_path / "c.txt"), str(tmp_path / "*.jsonl")]
  assert local_input_files(value) == [str(tmp_path / n) for n in ("c.txt", "a.jsonl", "b.jsonl")]
  assert local_input_files("") == []
  try:
    local_input_files(f"{tmp_path / 'none-*'}")
  except Exception as e:  # pylint: disable=broad-except
    assert "matches no file" in str(e) and "none-*" in str(e)
  else:
    raise AssertionError("a glob that matches nothing must be refused")
