"""A synchronous trainer that owns its train step, so one code path serves every strategy
(why not `model.fit`, and why accumulation and clipping are exact: docs/design.md, "The Trainer")."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Callable

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from bert_keras.atomic_io import gfile_write_text
from bert_keras.configs.training import TrainingConfig
from bert_keras.errors import UserError
from bert_keras import kernels
from bert_keras.training import distribute, fused_adamw, keras_internals
from bert_keras.progress import Progress, progress_line
from bert_keras.training.scalar_summaries import TENSORBOARD_DIR, ScalarSummaries

class Trainer:
  """Trains `model` on `task` with `optimizer` under `strategy`, with checkpoints and summaries.

  Build `model` and `optimizer` under `strategy.scope()` first; the optimizer must not clip (the
  Trainer clips by `config.optimizer.clip_global_norm`). `history_path` (history.jsonl) is
  rewritten by the chief after every checkpoint, keeping the earlier processes' rows.
  `implementation`, `fused_elementwise` and `jit_loss`: docs/design.md, "The Trainer".
  """

  def __init__(self, strategy: tf.distribute.Strategy, model: keras.Model,
               optimizer: keras.optimizers.Optimizer, task, config: TrainingConfig, *,
               fused_elementwise: bool = True, jit_loss: bool = False,
               history_path: str | None = None, implementation: str | None = None,
               summary_dir: str | None = None):
    if optimizer.global_clipnorm or optimizer.clipnorm or optimizer.clipvalue:
      raise ValueError("the optimizer must not clip: the Trainer clips the all-reduced gradient "
                       "by its global norm (config.optimizer.clip_global_norm)")
    self.strategy = strategy
    self.model = model
    self.optimizer = optimizer
    self.task = task
    self.model_dir = model_dir = config.outputs.output_dir
    self.global_batch_size = config.data.train_batch_size
    self.accum = config.optimizer.gradient_accumulation_steps
    self.clip_global_norm = config.optimizer.clip_global_norm or None
    self.jit_compile = config.runtime.jit_compile
    self.implementation = implementation or kernels.default_implementation()
    # What the steps call: the model itself, or the same variables through the CPU kernels.
    self._forward = kernels.implementation_of(model, self.implementation,
                                              fused_elementwise=fused_elementwise)
    self.steps_per_execution = config.runtime.steps_per_execution
    self.checkpoint_every = config.outputs.checkpoint_every
    self.log_every = config.outputs.log_every
    self.is_chief = distribute.is_chief(strategy)
    self.history: list[dict] = []
    self.history_path = history_path
    self._earlier_history = None  # rows of the earlier processes of this run (read once)
    self._start_time = None  # wall clock at the first train() call: rows carry elapsed_sec
    self._traces = 0  # times the train loop was traced: calls that traced are not timed

    # The Trainer has already summed the gradients over replicas (see the module docstring).
    keras_internals.skip_gradient_all_reduce(optimizer)

    with strategy.scope():
      self.global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
      # The step at which this run's data stream started (0, or the phase-2 start): on resume the
      # input skips (global_step - data_start_step) batches.
      self.data_start_step = tf.Variable(0, dtype=tf.int64, trainable=False,
                                         name="data_start_step")
      optimizer.build(model.trainable_variables)
    self.checkpoint = tf.train.Checkpoint(model=model_variables(model), optimizer=optimizer,
                                          global_step=self.global_step,
                                          data_start_step=self.data_start_step)
    # Every worker saves (saving can involve collectives); non-chiefs into their own directory,
    # keeping only their latest copy (restores always read the chief's).
    save_dir = model_dir if self.is_chief else os.path.join(
        model_dir, f".worker_{distribute.task_id(strategy)}")
    keep = config.outputs.keep_checkpoints if self.is_chief else 1
    self.manager = tf.train.CheckpointManager(self.checkpoint, save_dir, max_to_keep=keep,
                                              step_counter=self.global_step)
    # autograph=False throughout: the step's loops are written as tf.while_loop and its branches
    # are Python values known at trace time, so there is nothing to convert (conversion parsed and
    # rewrote about 20 functions at every launch, ~1.4 s).
    self._train_fn = tf.function(self._train_loop, autograph=False)
    self._eval_fn = tf.function(self._eval_loop, autograph=False)
    # The loss sums under XLA: the (batch * P, vocab) softmax cross-entropy, its gradient and the
    # arg-max fuse into a few passes (TF's CPU kernel evaluates exp element by element, twice).
    self._loss_sums = (tf.function(task.loss_sums, jit_compile=True, autograph=False)
                       if jit_loss else task.loss_sums)
    grads_fn = self._accumulated_grads
    self._grads_fn = (tf.function(grads_fn, jit_compile=True, autograph=False)
                      if self.jit_compile else grads_fn)
    self.summaries = ScalarSummaries(summary_dir or os.path.join(model_dir, TENSORBOARD_DIR))

  # === Checkpoints ===

  def restore(self) -> bool:
    """Resumes from the chief's latest checkpoint in model_dir; False when there is none."""
    latest = tf.train.latest_checkpoint(self.model_dir)
    if not latest:
      return False
    self.checkpoint.restore(latest).assert_existing_objects_matched()
    logging.info("resumed from %s at step %d", latest, int(self.global_step.numpy()))
    return True

  def save(self) -> str:
    return self.manager.save(checkpoint_number=self.global_step)

  # === The step ===

  def _micro_grads(self, variables, micro, counts):
    with tf.GradientTape() as tape:
      outputs = self._forward(self.task.model_inputs(micro), training=True)
      sums = self._loss_sums(micro, outputs)
      loss = self.task.loss({**sums, **counts})
      scaled = self.optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, variables)
    # None for variables the objective does not use (e.g. the pooler without NSP): zeros here, and
    # left out of the update (no weight decay either). Known at trace time, before the update.
    self._unused_paths = {v.path for g, v in zip(grads, variables) if g is None}
    grads = [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g)
             for g, v in zip(grads, variables)]
    return grads, sums

  def _accumulated_grads(self, batch, counts):
    """Sum of the micro-batch gradients of a (accum, micro, ...) batch; also the summed sums."""
    variables = self.model.trainable_variables
    take = lambda i: {k: v[i] for k, v in batch.items()}
    grads, sums = self._micro_grads(variables, take(0), counts)
    if self.accum == 1:
      return grads, sums

    def body(i, grads, sums):
      g, s = self._micro_grads(variables, take(i), counts)
      return i + 1, [a + b for a, b in zip(grads, g)], {k: sums[k] + s[k] for k in sums}

    _, grads, sums = tf.while_loop(lambda i, *_: i < self.accum, body, (tf.constant(1), grads, sums))
    return grads, sums

  def _replica_step(self, batch):
    ctx = tf.distribute.get_replica_context()
    flat = {k: tf.reshape(v, [-1] + v.shape.as_list()[2:]) for k, v in batch.items()}
    counts = ctx.all_reduce(tf.distribute.ReduceOp.SUM, self.task.counts(flat))
    grads, sums = self._grads_fn(batch, counts)
    variables = self.model.trainable_variables
    grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)
    sums = ctx.all_reduce(tf.distribute.ReduceOp.SUM, sums)
    apply = contextlib.nullcontext()
    if self.clip_global_norm:
      # Under loss scaling the gradient is scaled; clip at the equally scaled norm (exact: the
      # scale is a power of two), before the optimizer unscales it.
      scale = getattr(self.optimizer, "dynamic_scale", None)
      limit = self.clip_global_norm * (tf.cast(scale, tf.float32) if scale is not None else 1.0)
      inner = getattr(self.optimizer, "inner_optimizer", self.optimizer)
      if hasattr(inner, "gradient_scale"):
        # FusedAdamW multiplies by tf.clip_by_global_norm's factor (NaN when the norm is not
        # finite) inside its fused update, saving a pass over every gradient.
        apply = inner.gradient_scale(fused_adamw.clip_factor(tf.linalg.global_norm(grads), limit))
      else:
        grads, _ = tf.clip_by_global_norm(grads, limit)
    with apply:
      self.optimizer.apply_gradients(
          [(g, v) for g, v in zip(grads, variables) if v.path not in self._unused_paths])
    return sums

  def _train_loop(self, iterator, num_steps):
    self._traces += 1  # Python: runs only while tracing
    return self._sum_over_steps(self._replica_step, iterator, num_steps, count_steps=True)

  def _eval_loop(self, iterator, num_steps):
    def replica_eval(batch):
      ctx = tf.distribute.get_replica_context()
      micro = {k: tf.reshape(v, [-1] + v.shape.as_list()[2:]) for k, v in batch.items()}
      outputs = self._forward(self.task.model_inputs(micro), training=False)
      return ctx.all_reduce(tf.distribute.ReduceOp.SUM, self.task.loss_sums(micro, outputs))

    return self._sum_over_steps(replica_eval, iterator, num_steps)

  def _sum_over_steps(self, replica_fn, iterator, num_steps, count_steps=False):
    """Runs `replica_fn` on `num_steps` batches in the traced loop and adds its dicts of sums. The
    step is a nested tf.function, called before the loop (initial values) and in it: traced once."""
    @tf.function(autograph=False)
    def step():
      per_replica = self.strategy.run(replica_fn, args=(next(iterator),))
      if count_steps:
        self.global_step.assign_add(1)
      # All-reduced: every replica holds the same global sums.
      return {k: self.strategy.experimental_local_results(v)[0] for k, v in per_replica.items()}

    def body(i, sums):
      s = step()
      return i + 1, {k: sums[k] + s[k] for k in sums}

    one = tf.constant(1, num_steps.dtype)
    return tf.while_loop(lambda i, _: i < num_steps, body, (one, step()))[1]

  # === Loops ===

  def train(self, dataset_fn: Callable[[tf.distribute.InputContext, int], tf.data.Dataset],
            end_step: int, eval_fn: Callable[[], dict] | None = None, eval_every: int = 0,
            progress: bool = False):
    """Trains until global_step == end_step, resuming where the checkpoint left off;
    eval_fn() runs every `eval_every` steps and at the end. `progress`: the chief prints a
    `Progress` line (as fine-tuning does) instead of logging every `log_every` steps."""
    if self._start_time is None:
      self._start_time = time.time()
    step = int(self.global_step.numpy())
    self._load_earlier_history(step)
    skip = step - int(self.data_start_step.numpy())
    dist = self.strategy.distribute_datasets_from_function(lambda ctx: dataset_fn(ctx, skip))
    iterator = iter(dist)
    # Throughput counts the train calls alone: not checkpoints, evaluations, logging, nor a call
    # that traced (and compiled) the step, whose steps are left out of the window's count.
    window_sums, timed_steps, timed_sec = None, 0, 0.0
    printer = Progress("train", end_step) if progress and self.is_chief else None
    while step < end_step:
      n = self._steps_until_boundary(step, end_step, eval_every)
      traces, start = self._traces, time.perf_counter()
      sums = self._train_fn(iterator, tf.constant(n, tf.int32))
      sums = {k: float(v.numpy()) for k, v in sums.items()}  # waits for the steps to finish
      if self._traces == traces:
        timed_steps, timed_sec = timed_steps + n, timed_sec + time.perf_counter() - start
      window_sums = sums if window_sums is None else {k: window_sums[k] + sums[k] for k in sums}
      step = int(self.global_step.numpy())
      if printer is not None:
        printer.update(step, lambda: {"loss": self._loss(window_sums),
                                      "lr": self._last_learning_rate()})
      if step % self.log_every == 0 or step == end_step:
        self._log_train(step, end_step, window_sums,
                        timed_steps / max(timed_sec, 1e-9) if timed_steps else None,
                        log_line=printer is None)
        window_sums, timed_steps, timed_sec = None, 0, 0.0
      saved = step % self.checkpoint_every == 0 or step == end_step
      if saved:
        path = self.save()
        logging.info("step %d: saved %s", step, path)
        if self.history_path:
          self.write_history()
      if eval_fn is not None and eval_every and step % eval_every == 0 and step != end_step:
        eval_fn()
        if saved and self.history_path:  # a resume from this checkpoint does not evaluate again
          self.write_history()
    if eval_fn is not None:
      eval_fn()
    self.summaries.flush()
    return self.history

  def evaluate(self, dataset_fn: Callable[[tf.distribute.InputContext], tf.data.Dataset],
               num_steps: int, prefix: str = "eval") -> dict:
    """Metrics over `num_steps` batches of `dataset_fn` (no dropout), logged and summarised."""
    dist = self.strategy.distribute_datasets_from_function(dataset_fn)
    sums = self._eval_fn(iter(dist), tf.constant(num_steps, tf.int32))
    metrics = {k: float(v.numpy()) for k, v in self.task.metrics(sums).items()}
    step = int(self.global_step.numpy())
    logging.info("step %d %s: %s", step, prefix,
                 " ".join(f"{k}={v:.4f}" for k, v in sorted(metrics.items())))
    self._summaries(step, {f"{prefix}/{k}": v for k, v in metrics.items()})
    self.history.append({"step": step, "split": prefix, **metrics, **self._elapsed()})
    return metrics

  def _elapsed(self) -> dict:
    """{"elapsed_sec": wall seconds since train() began (evaluations included)}, if it has."""
    return {} if self._start_time is None else {"elapsed_sec": time.time() - self._start_time}

  def _steps_until_boundary(self, step, end_step, eval_every):
    n = min(self.steps_per_execution, end_step - step)
    for every in (self.log_every, self.checkpoint_every, eval_every):
      if every:
        n = min(n, every - step % every)
    return max(n, 1)

  # === Logging ===

  def _log_train(self, step, end_step, sums, steps_per_sec, log_line=True):
    """Logs (with `log_line`), summarises and records the window's metrics; `steps_per_sec` None
    (not logged) when every call of the window traced the step (mostly tracing and compiling)."""
    metrics = {k: float(v) for k, v in self.task.metrics(
        {k: tf.constant(v) for k, v in sums.items()}).items()}
    metrics.update(loss=self._loss(sums), learning_rate=self._last_learning_rate())
    if steps_per_sec is not None:
      metrics.update(steps_per_sec=steps_per_sec,
                     sequences_per_sec=steps_per_sec * self.global_batch_size)
    shown = {k: v for k, v in metrics.items() if k != "steps_per_sec"}
    if log_line:
      logging.info("%s", progress_line("train", step, end_step, steps_per_sec, shown))
    self._summaries(step, {f"train/{k}": v for k, v in metrics.items()})
    self.history.append({"step": step, "split": "train", **metrics, **self._elapsed()})

  def _summaries(self, step, scalars):
    if self.is_chief:
      self.summaries.write(step, scalars)

  def _loss(self, sums: dict) -> float:
    return float(self.task.loss({k: tf.constant(v) for k, v in sums.items()}))

  def _last_learning_rate(self) -> float:
    """The rate the last update used: Keras' `optimizer.learning_rate` is the NEXT update's
    (update k, from 1, used schedule(k - 1)); skipped updates do not advance `iterations`."""
    inner = getattr(self.optimizer, "inner_optimizer", self.optimizer)
    # Keras keeps the schedule in the private `_learning_rate`; without it, the current value.
    schedule = getattr(inner, "_learning_rate", None)
    if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
      done = int(np.asarray(inner.iterations))
      return float(np.asarray(schedule(max(done - 1, 0))))
    return float(np.asarray(self.optimizer.learning_rate))

  def _load_earlier_history(self, step: int) -> None:
    """Once per process (chief, with `history_path`): the rows of the earlier processes of this run
    at steps <= `step` (the restored one); later rows are dropped, this process logs them again."""
    if self._earlier_history is not None:
      return
    self._earlier_history = []
    if not (self.is_chief and self.history_path and tf.io.gfile.exists(self.history_path)):
      return
    with tf.io.gfile.GFile(self.history_path) as f:
      lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
      if not line.strip():
        continue
      try:
        row = json.loads(line)
        keep = row["step"] <= step
      except (ValueError, KeyError, TypeError) as e:
        raise UserError(f"{self.history_path}:{number}: not a history row ({e}); expected a "
                        "JSON object with a 'step' (move the file away to start the history "
                        "afresh)") from None
      if keep:
        self._earlier_history.append(row)

  def full_history(self) -> list[dict]:
    """The earlier processes' rows (but those whose (step, split) this process logged again, e.g.
    a finished run re-evaluated at its last step), then this process's."""
    again = {(row["step"], row["split"]) for row in self.history}
    return [row for row in self._earlier_history or ()
            if (row.get("step"), row.get("split")) not in again] + self.history

  def write_history(self, path: str | None = None) -> None:
    """`full_history` as JSON lines (atomic; chief only) to `path` or `history_path`."""
    if self.is_chief:
      gfile_write_text(path or self.history_path,
                       "".join(json.dumps(row) + "\n" for row in self.full_history()))


def check_workers_agree(strategy: tf.distribute.Strategy, step: int, model_dir: str) -> None:
  """UserError on every worker unless all workers of a MultiWorkerMirroredStrategy pass the same
  `step` (restored from its model_dir). A collective: every worker must call it. Min and max come
  from one all-gather (ReduceOp has no MIN / MAX)."""
  if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
    return

  @tf.function(autograph=False)
  def min_max():
    def replica_fn():
      every = tf.distribute.get_replica_context().all_gather(
          tf.constant([step], tf.int64), axis=0)
      return tf.stack([tf.reduce_min(every), tf.reduce_max(every)])
    return strategy.experimental_local_results(strategy.run(replica_fn))[0]

  low, high = (int(v) for v in min_max().numpy())
  if low != high:
    raise UserError(
        f"workers disagree on the step to resume from: this worker's model_dir {model_dir} is at "
        f"step {step}, other workers' at steps from {low} to {high}; all workers must share one "
        "model_dir (e.g. a gs:// path), so that every worker restores the same checkpoint")


def model_variables(model: keras.Model) -> dict:
  """Every model variable keyed by its path (Keras' object graph misses nested layers), for
  tf.train.Checkpoint; with the dropout seed states, so a resumed run draws the same masks."""
  variables, seen = {}, {}
  for v in model.variables:
    path = v.path
    if "seed_generator" in path:
      # Keras numbers seed generators with a process-global counter (seed_generator_7): key them by
      # their layer and order instead, so a second model in the same process restores too.
      owner = path.split("seed_generator")[0]
      seen[owner] = seen.get(owner, -1) + 1
      path = f"{owner}seed_generator_state_{seen[owner]}"
    variables[path] = v
  if len(variables) != len(model.variables):
    raise ValueError(f"model {model.name!r} has duplicate variable paths")
  return variables
