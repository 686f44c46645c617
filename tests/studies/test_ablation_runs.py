"""The BERT+GPT ablation study (studies/bert_gpt_ablation/) end to end at its smoke budget, and
the merge of its runs."""

import json

import pytest

from studies.bert_gpt_ablation.study_config import get_study_config
from studies.bert_gpt_ablation.ablation_study import merge_runs, run_study, span_token_f1


def test_span_token_f1():
  # exact, one-of-two overlapping, disjoint, predicted span too long (1 of 4 tokens right)
  f1 = span_token_f1([5, 6, 9, 4], [6, 7, 9, 7], [5, 5, 5, 4], [6, 6, 6, 4])
  assert f1 == pytest.approx((1.0 + 0.5 + 0.0 + 0.4) / 4)


@pytest.mark.slow
def test_ablation_study_smoke(tmp_path):
  study = get_study_config("smoke", tasks={"polarity": ("gpt1", "bert_ltr_no_nsp"),
                                           "lee_probe": ("gpt1", "bert_no_pretraining"),
                                           "polarity_probe": ("bert_ltr_no_nsp",)},
                           zero_shot_points=1)
  rows = run_study(study, str(tmp_path / "s0"), log=lambda _: None)
  variants = {(r["experiment"], r["variant"]) for r in rows}
  assert {("ablation", "gpt1"), ("ablation", "bert_ltr_no_nsp"), ("zero_shot", "gpt1"),
          ("layer_transfer", "gpt1_k0"), ("layer_transfer", "gpt1_k1")} <= variants
  probes = {(r["task"], r["variant"], r["metric"]) for r in rows}
  assert {("lee_probe", "gpt1", "spearman"), ("lee_probe", "bert_no_pretraining", "pearson"),
          ("polarity_probe", "bert_ltr_no_nsp", "accuracy")} <= probes
  assert all(-1.0 <= r["value"] <= 1.0 for r in rows if r["task"] == "lee_probe")
  assert all(0.0 <= r["value"] <= 1.0 for r in rows if r["task"] != "lee_probe")
  merged = merge_runs([str(tmp_path / "s0")], study, str(tmp_path / "merged"))
  assert len(merged) == len(rows)
  table = (tmp_path / "merged" / "table.md").read_text()
  assert "| gpt1 |" in table and "Zero-shot" in table and "lee_probe (spearman)" in table
  assert (tmp_path / "merged" / "ablation.png").stat().st_size > 1000


def test_merge_runs_of_two_presets_keeps_every_variant(tmp_path):
  # `signal` and `signal_extra` run as separate processes measure different variants; merging
  # them under either preset must put every measured variant in the table (not only the preset's).
  runs = {"core": [("bert_ltr_no_nsp", "span", "token_f1", 0.07), ("gpt1", "lee_probe",
                                                                     "spearman", 0.06)],
          "extra": [("bert_ltr_no_nsp_bilstm", "span", "token_f1", 0.09),
                    ("gpt1_size_double", "lee_probe", "spearman", 0.05)]}
  for name, measured in runs.items():
    (tmp_path / name).mkdir()
    (tmp_path / name / "results.jsonl").write_text("".join(
        json.dumps({"experiment": "ablation", "variant": v, "task": t, "metric": m, "seed": s,
                    "value": x + s / 100}) + "\n" for v, t, m, x in measured for s in (0, 1)))
  study = get_study_config("signal")
  merged = merge_runs([str(tmp_path / "core"), str(tmp_path / "extra")], study,
                      str(tmp_path / "merged"))
  assert len(merged) == 8
  table = (tmp_path / "merged" / "table.md").read_text()
  assert "| bert_ltr_no_nsp_bilstm |  |  | 0.095 ± 0.007 |  |" in table
  assert "| gpt1_size_double | 0.055 ± 0.007 |" in table
  assert "| gpt1 | 0.065 ± 0.007 |" in table
  config = json.loads((tmp_path / "merged" / "study_config.json").read_text())
  assert config["tasks"]["span"][-1] == "bert_ltr_no_nsp_bilstm"
  assert "gpt1_size_double" in config["variants"]
