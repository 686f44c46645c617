"""Runs the BERT section 5.1 / GPT-1 section 5 ablations at small scale and writes the table + plot.

  python -m studies.bert_gpt_ablation.run_ablation --output_dir=out/ablation [--preset=small]
      [--seeds=0,1,2]
      [--pretrain_steps=150] [--tasks=polarity,lee_similarity,span] [--variants=elmo_ltr_rtl]

Run from the repository root (`studies` is not installed with the package). Writes
study_config.json, results.jsonl, table.md and ablation.png into --output_dir. To use more
processes, run one seed per process (--seeds=0 --output_dir=out/s0, ...) then
--merge=out/s0,out/s1,out/s2 --output_dir=out/ablation. A measurement present in several merged
runs is taken from the first run listed, so a re-measurement (e.g. --variants=elmo_ltr_rtl after a
fix) replaces the old rows when its directory is listed first; every other row is kept.
"""

from absl import app, flags

from bert_keras.errors import UserError, parse_flags, run_main
from studies.bert_gpt_ablation.study_config import (DEFAULT_TASK_VARIANTS, PROBE_TASK_VARIANTS,
                                                    get_study_config)

flags.DEFINE_string("output_dir", None, "Where the table, plot and results go.")
flags.DEFINE_string("preset", "small", "Study budget: configs/studies/<preset>.json.")
flags.DEFINE_list("seeds", None, "Override the preset's seeds, e.g. 0,1,2.")
flags.DEFINE_integer("pretrain_steps", None, "Override the pretraining steps of every model.")
flags.DEFINE_list("corpora", None, "Override the pretraining corpora (wikipedia, lee_background).")
flags.DEFINE_list("tasks", None, "Subset of the study tasks (polarity, lee_similarity, span, "
                  "lee_probe, polarity_probe).")
flags.DEFINE_list("variants", None, "Run only these variants of the preset (e.g. elmo_ltr_rtl, "
                  "to re-measure one variant); the other variants' rows come from --merge.")
flags.DEFINE_list("merge", None, "Instead of running, merge the results.jsonl of these study "
                  "output dirs (e.g. one process per seed) into one table and plot.")
flags.mark_flag_as_required("output_dir")


def main(argv):
  del argv
  F = flags.FLAGS
  overrides = {}
  if F.seeds:
    try:
      overrides["seeds"] = tuple(int(s) for s in F.seeds)
    except ValueError:
      raise UserError(f"--seeds={','.join(F.seeds)}: expected comma-separated integers") from None
  if F.pretrain_steps:
    overrides["pretrain_steps"] = F.pretrain_steps
  if F.corpora:
    overrides["corpora"] = tuple(F.corpora)
  if F.tasks:
    defaults = {**DEFAULT_TASK_VARIANTS, **PROBE_TASK_VARIANTS}
    overrides["tasks"] = {t: defaults.get(t, ()) for t in F.tasks}
    if "polarity" not in F.tasks:
      overrides["layer_transfer_task"] = ""
  study = get_study_config(F.preset, **overrides)
  if F.variants:
    study = study.only_variants(F.variants)
  # Imported once the flags are checked: a bad flag is answered before TensorFlow loads.
  from studies.bert_gpt_ablation.ablation_study import merge_runs, run_study  # pylint: disable=import-outside-toplevel
  if F.merge:
    merge_runs(F.merge, study, F.output_dir)
  else:
    run_study(study, F.output_dir)


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
