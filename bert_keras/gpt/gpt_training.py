"""Pretraining and fine-tuning drivers for GPT-1 (and the study's other small models) on the
generic `Trainer`, from in-memory features. A run's output directory receives the Trainer's
checkpoints/ and its TensorBoard events, tensorboard/."""

from __future__ import annotations

import math
import os
from typing import Optional

import keras
import numpy as np
import tensorflow as tf

from bert_keras.gpt.gpt_finetuning_task import GPTFinetuningTask
from bert_keras.gpt.gpt_pretraining_task import GPTPretrainingTask
from bert_keras.gpt.lm_data import in_memory_dataset_fn
from bert_keras.progress import Progress
from bert_keras.training import distribute
from bert_keras.training.optimization import create_optimizer
from bert_keras.training.scalar_summaries import TENSORBOARD_DIR
from bert_keras.training.trainer import Trainer
from bert_keras.configs.gpt import GPTFinetuningConfig, GPTPretrainingConfig
from bert_keras.configs.training import OptimizerConfig, TrainingConfig


def trainer_config(output_dir: str, batch_size: int, seed: int, clip_global_norm: float | None,
                   log_every: int, steps_per_execution: int | None = None) -> TrainingConfig:
  """The Trainer's settings of a run from in-memory features: no checkpoints but the last, one
  kept, in <output_dir>/checkpoints; `steps_per_execution` (default `log_every`) steps per call."""
  return TrainingConfig.from_flat(output_dir=os.path.join(output_dir, "checkpoints"),
                                  train_batch_size=batch_size, seed=seed,
                                  clip_global_norm=clip_global_norm or 0.0, checkpoint_every=10**9,
                                  keep_checkpoints=1, log_every=log_every,
                                  steps_per_execution=steps_per_execution or log_every)


def fit(model: keras.Model, task, features: dict, *, optimizer, config: TrainingConfig,
        num_steps: int, trainer: Optional[Trainer] = None, progress: bool = False) -> Trainer:
  """Trains `model` on `task` over in-memory `features` for `num_steps` more steps, with the
  Trainer's settings `config` (see `trainer_config`); events go to tensorboard/ beside the
  checkpoints' directory. `progress`: see `Trainer.train`.

  Pass the returned Trainer back in to continue (e.g. to probe checkpoints over time).
  """
  if trainer is None:
    trainer = Trainer(distribute.get_strategy("default"), model, optimizer, task, config,
                      summary_dir=os.path.join(os.path.dirname(config.outputs.output_dir),
                                               TENSORBOARD_DIR))
  end = int(trainer.global_step.numpy()) + num_steps
  trainer.train(in_memory_dataset_fn(features, config.data.train_batch_size,
                                     seed=config.runtime.seed), end_step=end, progress=progress)
  return trainer


def fit_in_process(model: keras.Model, task, features: dict, *, optimizer, config: TrainingConfig,
                   num_steps: int, step_cache: Optional[dict] = None) -> list:
  """The same task contract and update as `fit`, as one traced step in a Python loop: no strategy,
  checkpoints or summaries; of `config` it reads the batch, the seed and the clipping. For the study's many short runs on one CPU, where the Trainer's graph
  construction (a traced multi-step loop) costs more than the training itself. Returns the losses.

  Tracing the step costs seconds; a caller that continues the same model, task and optimizer in
  chunks (e.g. probing between them) passes the same `step_cache` dict so it is traced once.
  """
  n = len(next(iter(features.values())))
  batch_size = min(config.data.train_batch_size, n)
  rng = np.random.default_rng(config.runtime.seed)
  clip_global_norm = config.optimizer.clip_global_norm
  if step_cache is not None and "step" in step_cache:
    return _run_steps(step_cache["step"], features, num_steps, batch_size, n, rng)

  @tf.function(reduce_retracing=True)
  def step(batch):
    counts = task.counts(batch)
    with tf.GradientTape() as tape:
      outputs = model(task.model_inputs(batch), training=True)
      loss = task.loss({**task.loss_sums(batch, outputs), **counts})
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    used = [(g, v) for g, v in zip(grads, variables) if g is not None]
    grads = [g for g, _ in used]
    if clip_global_norm:
      grads, _ = tf.clip_by_global_norm(grads, clip_global_norm)
    optimizer.apply_gradients(zip(grads, [v for _, v in used]))
    return loss

  if step_cache is not None:
    step_cache["step"] = step
  return _run_steps(step, features, num_steps, batch_size, n, rng)


def _run_steps(step, features: dict, num_steps: int, batch_size: int, n: int, rng) -> list:
  """Shuffled batches without replacement within an epoch; returns each step's loss."""
  losses, order = [], np.array([], np.int64)
  for _ in range(num_steps):
    if len(order) < batch_size:
      order = np.concatenate([order, rng.permutation(n)])
    index, order = order[:batch_size], order[batch_size:]
    losses.append(float(step({k: tf.constant(v[index]) for k, v in features.items()})))
  return losses


def pretraining_optimizer(config: GPTPretrainingConfig):
  """Section 4.1: Adam(W), linear warmup to max lr then cosine to 0. Clipping is the Trainer's."""
  return create_optimizer(OptimizerConfig(
      optimizer=config.optimizer, learning_rate=config.learning_rate,
      num_train_steps=config.num_train_steps, num_warmup_steps=config.num_warmup_steps,
      weight_decay_rate=config.weight_decay_rate, decay=config.decay, clip_global_norm=0.0,
      epsilon=1e-8))


def pretrain(model: keras.Model, windows: dict, config: GPTPretrainingConfig, output_dir: str,
             num_steps: Optional[int] = None, trainer: Optional[Trainer] = None,
             log_every: int = 100) -> Trainer:
  """Trains a GPTLanguageModel on contiguous windows {input_ids, input_mask} (L1)."""
  keras.utils.set_random_seed(config.seed)
  optimizer = trainer.optimizer if trainer else pretraining_optimizer(config)
  settings = trainer_config(output_dir, config.train_batch_size, config.seed,
                            config.clip_global_norm, log_every)
  return fit(model, GPTPretrainingTask(), windows, optimizer=optimizer, config=settings,
             num_steps=num_steps or config.num_train_steps, trainer=trainer)


def finetune_num_steps(num_examples: int, config: GPTFinetuningConfig) -> int:
  return max(1, math.ceil(num_examples * config.num_epochs / config.train_batch_size))


def finetune(model: keras.Model, features: dict, config: GPTFinetuningConfig, output_dir: str,
             log_every: int = 100) -> Trainer:
  """Fine-tunes a GPTTaskModel with L3 = L2 + lm_coef * L1 (section 3.2), linear decay with warmup
  over `warmup_proportion` of training (section 4.1). The progress line is updated after every call
  of the train loop: 10 steps a call (0.3 s for gpt_tiny on 2 CPU cores; one step a call made each
  step ~5 ms slower), fewer in a short run, so that its line still gets a rate."""
  keras.utils.set_random_seed(config.seed)
  num_steps = finetune_num_steps(len(features["labels"]), config)
  optimizer = create_optimizer(OptimizerConfig(
      learning_rate=config.learning_rate, num_train_steps=num_steps,
      num_warmup_steps=int(config.warmup_proportion * num_steps),
      weight_decay_rate=config.weight_decay_rate, decay=config.decay, clip_global_norm=0.0,
      epsilon=1e-8))
  task = GPTFinetuningTask(model.task_type, config.lm_coef)
  settings = trainer_config(output_dir, min(config.train_batch_size, len(features["labels"])),
                            config.seed, 1.0, min(log_every, num_steps),
                            steps_per_execution=max(1, min(10, num_steps // 20)))
  return fit(model, task, features, optimizer=optimizer, config=settings, num_steps=num_steps,
             progress=True)


def predict(model: keras.Model, inputs: dict, batch_size: int = 64, key: str = "logits",
            label: str | None = None) -> np.ndarray:
  """Runs `model` without dropout over numpy inputs in batches; returns outputs[key]. With a
  `label`, prints the progress line `<label> step k/n ...` over the batches."""
  n = len(next(iter(inputs.values())))
  progress = Progress(label, -(-n // batch_size)) if label else None
  out = []
  for start in range(0, n, batch_size):
    batch = {k: v[start:start + batch_size] for k, v in inputs.items()}
    out.append(keras.ops.convert_to_numpy(model(batch, training=False)[key]))
    if progress is not None:
      progress.update(len(out))
  return np.concatenate(out, axis=0)
