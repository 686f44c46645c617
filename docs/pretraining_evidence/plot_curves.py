"""Plots held-out pretraining curves (eval_metrics.json of run_pretraining) against the baseline.

  python docs/pretraining_evidence/plot_curves.py --out docs/pretraining_evidence/curves.png \
      LABEL=MODEL_DIR [LABEL=MODEL_DIR ...]

Writes the PNG (masked-LM accuracy with the unigram baseline, NSP accuracy, masked-LM loss, each
against steps) and prints a markdown table of every evaluation (step, seconds, metrics).
"""

from __future__ import annotations

import argparse
import json
import os


def load(model_dir: str) -> dict:
  with open(os.path.join(model_dir, "eval_metrics.json"), encoding="utf-8") as f:
    return json.load(f)


def table(label: str, metrics: dict) -> str:
  lines = [f"**{label}** (unigram baseline token id {metrics['unigram_baseline']['token_id']})", "",
           "| step | seconds | held-out MLM acc | unigram baseline | ratio | NSP acc "
           "| NSP majority | MLM loss |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
  for row in metrics["eval"]:
    base = row.get("mlm_unigram_accuracy", float("nan"))
    lines.append(f"| {row['step']} | {row.get('elapsed_sec', float('nan')):.0f} | "
                 f"{row['mlm_accuracy']:.4f} | {base:.4f} | {row['mlm_accuracy'] / base:.2f}x | "
                 f"{row.get('nsp_accuracy', float('nan')):.4f} | "
                 f"{row.get('nsp_majority_accuracy', float('nan')):.4f} | {row['mlm_loss']:.3f} |")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True, help="PNG path")
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
    line, = axes[0].plot(steps, [r["mlm_accuracy"] for r in rows], marker=".", label=label)
    axes[0].plot(steps, [r["mlm_unigram_accuracy"] for r in rows], ls="--", color=line.get_color(),
                 label=f"{label}: unigram baseline")
    if "nsp_accuracy" in rows[0]:
      axes[1].plot(steps, [r["nsp_accuracy"] for r in rows], marker=".", label=label)
    axes[2].plot(steps, [r["mlm_loss"] for r in rows], marker=".", label=label)
  axes[1].axhline(0.5, color="gray", ls="--", label="chance")
  for ax, title in zip(axes, ("held-out masked-LM accuracy", "held-out NSP accuracy",
                              "held-out masked-LM loss")):
    ax.set_title(title)
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
  fig.tight_layout()
  tmp = args.out + ".tmp.png"
  fig.savefig(tmp, dpi=90)
  os.replace(tmp, args.out)
  print("\n\n".join(table(label, metrics) for label, metrics in runs))


if __name__ == "__main__":
  main()
