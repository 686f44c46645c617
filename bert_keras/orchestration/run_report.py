"""A small static HTML report of a run: the table, the training curves and metrics as PNG plots."""

from __future__ import annotations

import html
import os
import re

from bert_keras.atomic_io import write_text
from bert_keras.orchestration.run_record import RunRecord


def _safe(name: str) -> str:
  return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


# A held-out baseline curve ("eval_mlm_unigram_accuracy", "eval_nsp_majority_accuracy") and the
# accuracy it is the floor of ("eval_mlm_accuracy").
_BASELINE = re.compile(r"^(?P<stem>.*)_(?:unigram|majority)_accuracy$")
_COLUMNS = 3


def _panel_of(name: str) -> str:
  """The panel of a curve: train and held-out values share one, a baseline joins its accuracy."""
  name = name.split("/", 1)[-1]
  match = _BASELINE.match(name)
  if match:
    name = match["stem"] + "_accuracy"
  return re.sub(r"^(train|eval)_", "", name)


def curves_figure(title: str, curves: dict):
  """A grid of panels, one per quantity, baselines dashed."""
  from matplotlib import pyplot as plt  # pylint: disable=import-outside-toplevel

  panels: dict[str, list[str]] = {}
  for name in sorted(curves):
    panels.setdefault(_panel_of(name), []).append(name)
  columns = min(_COLUMNS, len(panels))
  rows = -(-len(panels) // columns)
  fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.2 * rows), squeeze=False)
  for ax, (panel, names) in zip(axes.flat, panels.items()):
    for name in names:
      points = curves[name]
      label = name.split("/", 1)[-1]
      baseline = bool(_BASELINE.match(label))
      ax.plot([p[0] for p in points], [p[1] for p in points], label=label,
              linestyle="--" if baseline else "-", color="grey" if baseline else None,
              marker="." if len(points) < 30 and not baseline else None)
    ax.set_title(panel)
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)
    if len(names) > 1:
      ax.legend(fontsize=7)
  for ax in axes.flat[len(panels):]:
    ax.set_visible(False)
  fig.suptitle(title)
  fig.tight_layout()
  return fig


def write_plots(record: RunRecord, out_dir: str) -> list[tuple[str, str]]:
  """One PNG of curves per component with any, one bar chart per shared metric: [(title, file)]."""
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=import-outside-toplevel

  os.makedirs(out_dir, exist_ok=True)
  images = []
  for c in record.components:
    if not c.curves:
      continue
    fig = curves_figure(c.name, c.curves)
    file_name = f"curves_{_safe(c.name)}.png"
    fig.savefig(os.path.join(out_dir, file_name), dpi=80)
    plt.close(fig)
    images.append((f"{c.name}: training curves", file_name))

  by_metric: dict[str, list[tuple[str, float]]] = {}
  for c in record.components:
    for key, value in c.metrics.items():
      if isinstance(value, (int, float)) and not isinstance(value, bool):
        by_metric.setdefault(key.split("/", 1)[-1], []).append((c.name, float(value)))
  for metric, values in sorted(by_metric.items()):
    if len(values) < 2:
      continue
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(values)), 3.2))
    ax.bar(range(len(values)), [v for _, v in values])
    ax.set_xticks(range(len(values)), [n for n, _ in values], rotation=30, ha="right", fontsize=8)
    ax.set_title(metric)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    file_name = f"metric_{_safe(metric)}.png"
    fig.savefig(os.path.join(out_dir, file_name), dpi=80)
    plt.close(fig)
    images.append((f"metric: {metric}", file_name))
  return images


def write_html_report(record: RunRecord, out_dir: str) -> str:
  """Writes `report.html` (and its PNGs) into `out_dir`; returns the HTML path."""
  images = write_plots(record, out_dir)
  rows = []
  for c in record.components:
    metrics = "<br>".join(f"{html.escape(k)} = {v:.4g}" if isinstance(v, float) else
                          f"{html.escape(k)} = {html.escape(str(v))}"
                          for k, v in sorted(c.metrics.items()))
    artifacts = "<br>".join(f"{html.escape(k)}: <code>{html.escape(a['uri'])}</code>"
                            for k, a in sorted(c.artifacts.items()))
    error = f"<pre>{html.escape(c.error)}</pre>" if c.error else ""
    rows.append(f"<tr class='{c.status}'><td>{html.escape(c.name)}</td><td>{c.status}</td>"
                f"<td>{c.duration_s:.1f}s</td><td>{metrics}{error}</td><td>{artifacts}</td></tr>")
  figures = "\n".join(f"<figure><img src='{f}' alt='{html.escape(t)}'><figcaption>{html.escape(t)}"
                      f"</figcaption></figure>" for t, f in images)
  page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(record.pipeline)} run {record.run_id}</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;vertical-align:top;font-size:90%}}
tr.failed{{background:#fdd}} tr.cached{{color:#666}} figure{{display:inline-block;margin:1em}}</style>
</head><body>
<h1>{html.escape(record.pipeline)}: {record.status}</h1>
<p>run {record.run_id}, {record.duration_s:.1f}s, root <code>{html.escape(record.pipeline_root)}</code></p>
<table><tr><th>component</th><th>status</th><th>time</th><th>metrics</th><th>artifacts</th></tr>
{''.join(rows)}
</table>
{figures}
</body></html>
"""
  path = os.path.join(out_dir, "report.html")
  write_text(path, page)
  return path
