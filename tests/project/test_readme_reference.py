"""README.md reads as a reference: a table of contents that reaches every section, a heading for each
way of running at scale and of serving, lines a reader can follow, and no example that connects to
a real address when pasted."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _readme():
  with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    return f.read()


def _anchor(heading):
  """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
  return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(level):
  return re.findall(rf"^{'#' * level} (.+)$", _readme(), re.MULTILINE)


def test_the_contents_link_every_section_and_every_link_lands():
  text = _readme()
  contents = text.split("## Contents", 1)[1].split("\n## ", 1)[0]
  linked = set(re.findall(r"\]\(#([\w-]+)\)", contents))
  assert {_anchor(h) for h in _headings(2) if h != "Contents"} <= linked
  anchors = {_anchor(h) for level in (2, 3) for h in _headings(level)}
  assert set(re.findall(r"\]\(#([\w-]+)\)", text)) <= anchors


def test_running_at_scale_and_serving_have_a_heading_each():
  assert {"TPU", "Dataflow", "Kubeflow Pipelines and Vertex AI Pipelines", "TF Serving",
          "LiteRT", "In process"} <= set(_headings(3))


def test_no_line_is_longer_than_300_characters():
  long = [i for i, line in enumerate(_readme().splitlines(), 1) if len(line) > 300]
  assert not long, f"README.md lines over 300 characters: {long}"


def test_no_example_names_a_routable_address():
  addresses = set(re.findall(r"\b\d{1,3}(?:\.\d{1,3}){3}\b", _readme())) - {"127.0.0.1"}
  assert not addresses, f"README.md names addresses a paste would reach: {sorted(addresses)}"
