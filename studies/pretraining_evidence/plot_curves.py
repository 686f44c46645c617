"""Plots held-out pretraining curves (eval_metrics.json of run_pretraining) against the baseline.

  python studies/pretraining_evidence/plot_curves.py --output_file studies/pretraining_evidence/curves.png \
      LABEL=MODEL_DIR [LABEL=MODEL_DIR ...]

Writes the PNG (masked-LM accuracy with the unigram baseline, NSP accuracy, masked-LM loss, each
against steps) and prints a markdown table of every evaluation (step, seconds, metrics). An "ltr"
run's next-token metrics (lm_* instead of mlm_*) take the masked-LM ones' place. The prefix is read
per row: an "ltr" run resumed across the renaming of its metrics (mlm_* -> lm_*) has rows of both.
"""

from __future__ import annotations

import argparse
import json
import os


def load(model_dir: str) -> dict:
  with open(os.path.join(model_dir, "eval_metrics.json"), encoding="utf-8") as f:
    return json.load(f)


def row_prefix(row: dict) -> str:
  """"lm" for a row with next-token metrics (lm_*), "mlm" for one with masked-LM metrics (mlm_*)."""
  return "lm" if "lm_accuracy" in row else "mlm"


def lm_prefix(rows) -> str:
  """"lm" for an "ltr" run (any row with lm_* metrics, older rows may say mlm_*), else "mlm"."""
  return "lm" if any(row_prefix(row) == "lm" for row in rows) else "mlm"


def table(label: str, metrics: dict) -> str:
  name = "LM" if lm_prefix(metrics["eval"]) == "lm" else "MLM"
  lines = [f"**{label}** (unigram baseline token id {metrics['unigram_baseline']['token_id']})", "",
           f"| step | seconds | held-out {name} acc | unigram baseline | ratio | NSP acc "
           f"| NSP majority | {name} loss |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
  for row in metrics["eval"]:
    lm = row_prefix(row)
    base = row.get(f"{lm}_unigram_accuracy", float("nan"))
    accuracy = row[f"{lm}_accuracy"]
    lines.append(f"| {row['step']} | {row.get('elapsed_sec', float('nan')):.0f} | "
                 f"{accuracy:.4f} | {base:.4f} | {accuracy / base:.2f}x | "
                 f"{row.get('nsp_accuracy', float('nan')):.4f} | "
                 f"{row.get('nsp_majority_accuracy', float('nan')):.4f} | "
                 f"{row[f'{lm}_loss']:.3f} |")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--output_file", required=True, help="PNG path")
  parser.add_argument("runs", nargs="+", help="LABEL=MODEL_DIR")
  args = parser.parse_args()
  runs = [(r.split("=", 1)[0], load(r.split("=", 1)[1])) for r in args.runs]

  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=import-outside-toplevel

  fig, axes = plt.subplots(1, 3, figsize=(15, 4))
  for label, metrics in runs:
    rows = metrics["eval"]
    steps = [r["step"] for r in rows]
    line, = axes[0].plot(steps, [r[f"{row_prefix(r)}_accuracy"] for r in rows], marker=".",
                         label=label)
    axes[0].plot(steps, [r[f"{row_prefix(r)}_unigram_accuracy"] for r in rows], ls="--",
                 color=line.get_color(), label=f"{label}: unigram baseline")
    if "nsp_accuracy" in rows[0]:
      axes[1].plot(steps, [r["nsp_accuracy"] for r in rows], marker=".", label=label)
    axes[2].plot(steps, [r[f"{row_prefix(r)}_loss"] for r in rows], marker=".", label=label)
  axes[1].axhline(0.5, color="gray", ls="--", label="chance")
  kinds = sorted({lm_prefix(metrics["eval"]) for _, metrics in runs}, reverse=True)
  what = " / ".join({"mlm": "masked-LM", "lm": "next-token LM"}[k] for k in kinds)
  for ax, title in zip(axes, (f"held-out {what} accuracy", "held-out NSP accuracy",
                              f"held-out {what} loss")):
    ax.set_title(title)
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
  fig.tight_layout()
  tmp = args.output_file + ".tmp.png"
  fig.savefig(tmp, dpi=90)
  os.replace(tmp, args.output_file)
  print("\n\n".join(table(label, metrics) for label, metrics in runs))


if __name__ == "__main__":
  main()
