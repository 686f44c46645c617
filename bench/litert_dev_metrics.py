"""Benchmark (not a test): the dev metric of a fine-tuned task served three ways, the text-in
SavedModel, the LiteRT fp32 model and the LiteRT dynamic-range int8 model, from raw text.

`--quantize=int8` ships only with its drop stated: this script measures it. For each
`--finetuned_dir` (a run_finetuning output of a classification or regression task) it exports
`--format=saved_model,litert` and `--format=litert --quantize=int8` with scripts/export_model.py,
as a user does, serves the task's dev examples through each in batches of 32, and scores them with
the task's own metrics (the same code as run_finetuning's evaluation):

  python bench/litert_dev_metrics.py --finetuned_dirs=out/polarity,out/lee_similarity \\
      [--output_dir=bench/out/litert_dev_metrics]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

flags.DEFINE_list("finetuned_dirs", [], "run_finetuning output directories (classification or "
                  "regression tasks).")
flags.DEFINE_string("output_dir", os.path.join(ROOT, "bench", "out", "litert_dev_metrics"),
                    "Where the exports are written.")
flags.DEFINE_integer("batch_size", 32, "Examples per serve call.")
FLAGS = flags.FLAGS


def export(finetuned_dir: str, output_dir: str, *extra: str) -> None:
  cmd = [sys.executable, os.path.join(ROOT, "scripts", "export_model.py"),
         f"--finetuned_dir={finetuned_dir}", f"--output_dir={output_dir}", "--overwrite", *extra]
  subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"))


def predictions(serve, examples, regression: bool, batch_size: int) -> list[dict]:
  """The task's prediction records from a `serve` that takes (text_a, text_b) batches."""
  out = []
  for start in range(0, len(examples), batch_size):
    batch = examples[start:start + batch_size]
    args = [[e.text_a for e in batch]]
    if batch[0].text_b is not None:
      args.append([e.text_b for e in batch])
    result = serve(*args)
    for example, i in zip(batch, range(len(batch))):
      if regression:
        out.append({"guid": example.guid, "prediction": float(np.asarray(result["score"])[i])})
      else:
        label = np.asarray(result["label"])[i]
        out.append({"guid": example.guid,
                    "prediction": label.decode("utf-8") if isinstance(label, bytes) else str(label)})
  return out


def main(_):
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import

  from bert_keras.configs.finetuning import FinetuningConfig  # pylint: disable=import-outside-toplevel
  from bert_keras.serving import litert  # pylint: disable=import-outside-toplevel
  from bert_keras.tasks.registry import get_task  # pylint: disable=import-outside-toplevel

  rows = []
  for finetuned_dir in FLAGS.finetuned_dirs:
    config = FinetuningConfig.from_file(os.path.join(finetuned_dir, "config.json"))
    task = get_task(config.task)
    examples = task.read_examples(config.run.data_dir, "dev")
    name = config.task.task.replace("/", "_")
    fp32_dir = os.path.join(FLAGS.output_dir, name)
    int8_dir = os.path.join(FLAGS.output_dir, f"{name}_int8")
    export(finetuned_dir, fp32_dir, "--format=saved_model,litert")
    export(finetuned_dir, int8_dir, "--format=litert", "--quantize=int8")
    paths = {"SavedModel": tf.saved_model.load(fp32_dir).serve,
             "LiteRT fp32": litert.load(os.path.join(fp32_dir, "model.tflite")).serve,
             "LiteRT int8": litert.load(os.path.join(int8_dir, "model.tflite")).serve}
    metrics = {path: task.evaluate(examples, predictions(serve, examples, task.is_regression,
                                                         FLAGS.batch_size))
               for path, serve in paths.items()}
    sizes = {"LiteRT fp32": os.path.getsize(os.path.join(fp32_dir, "model.tflite")),
             "LiteRT int8": os.path.getsize(os.path.join(int8_dir, "model.tflite"))}
    rows.append({"task": config.task.task, "dev_examples": len(examples), "metrics": metrics,
                 "tflite_bytes": sizes})
    print(f"{config.task.task} ({len(examples)} dev examples)")
    for path, values in metrics.items():
      drop = {k: round(metrics["LiteRT fp32"][k] - v, 4) for k, v in values.items()}
      shown = ", ".join(f"{k} {v:.4f}" for k, v in values.items())
      print(f"  {path:12s} {shown}" + (f"   drop from fp32: {drop}" if path == "LiteRT int8" else ""))
  with open(os.path.join(FLAGS.output_dir, "results.json"), "w", encoding="utf-8") as f:
    json.dump(rows, f, indent=2)


if __name__ == "__main__":
  app.run(main)
