"""The study's in-process training: one traced step in a Python loop over in-memory features, for
its many short runs on one CPU (where the Trainer's traced multi-step loop costs more to build than
the training itself), and GPT-1's fine-tuning loss L3 = L2 + lambda * L1 in the Trainer's task
contract (bert_keras/training/pretraining_task.py) that this loop shares."""

from __future__ import annotations

from typing import Optional

import keras
import numpy as np
import tensorflow as tf

from bert_keras.configs.training import TrainingConfig
from bert_keras.gpt.losses import lm_loss_sums


def fit_in_process(model: keras.Model, task, features: dict, *, optimizer, config: TrainingConfig,
                   num_steps: int, step_cache: Optional[dict] = None) -> list:
  """The Trainer's task contract and update, as one traced step in a Python loop: no strategy,
  checkpoints or summaries; of `config` it reads the batch, the seed and the clipping. Returns the
  losses.

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


def predict(model: keras.Model, inputs: dict, batch_size: int = 64, key: str = "logits") -> np.ndarray:
  """Runs `model` without dropout over numpy inputs in batches; returns outputs[key]."""
  n = len(next(iter(inputs.values())))
  out = [keras.ops.convert_to_numpy(model({k: v[start:start + batch_size]
                                           for k, v in inputs.items()}, training=False)[key])
         for start in range(0, n, batch_size)]
  return np.concatenate(out, axis=0)


def task_loss(labels, logits, task_type: str):
  """-L2 per example. classification / multiple_choice: softmax cross-entropy over classes or over
  answers (logits (batch, C), int labels); similarity with one output: squared error (STS-B-like
  regression, float labels); similarity with more outputs: softmax cross-entropy (MRPC/QQP-like)."""
  logits = tf.cast(logits, tf.float32)
  if task_type == "similarity" and logits.shape[-1] == 1:
    return tf.reduce_mean(tf.square(logits[:, 0] - tf.cast(tf.reshape(labels, [-1]), tf.float32)))
  labels = tf.cast(tf.reshape(labels, [-1]), tf.int32)
  return tf.reduce_mean(
      tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))



class GPTFinetuningTask:
  """Features {input_word_ids, input_mask} ((batch, [k,] seq)) and `labels` (batch[, 1]).

  Sums: the task loss over examples and the LM loss over the fine-tuning sequences' real next
  tokens; loss = task_sum / examples + lm_coef * lm_sum / tokens. lm_coef = 0 is "w/o aux LM".
  """

  def __init__(self, task_type: str, lm_coef: float = 0.5):
    self.task_type = task_type
    self.lm_coef = float(lm_coef)

  def model_inputs(self, features):
    return {"input_word_ids": features["input_word_ids"], "input_mask": features["input_mask"]}

  def loss_sums(self, features, outputs):
    count = tf.cast(tf.shape(features["input_word_ids"])[0], tf.float32)
    sums = {"task_loss_sum": task_loss(features["labels"], outputs["logits"],
                                              self.task_type) * count,
            "examples": count}
    if self.lm_coef:
      lm_sum, lm_weight = lm_loss_sums(features["input_word_ids"], features["input_mask"],
                                              outputs["lm_logits"])
      sums.update(lm_loss_sum=lm_sum, lm_weight=lm_weight)
    return sums

  def counts(self, features):
    counts = {"examples": tf.cast(tf.shape(features["input_word_ids"])[0], tf.float32)}
    if self.lm_coef:
      mask = tf.cast(features["input_mask"], tf.float32)
      counts["lm_weight"] = tf.reduce_sum(mask[..., 1:])
    return counts

  def loss(self, sums):
    loss = sums["task_loss_sum"] / tf.maximum(sums["examples"], 1.0)
    if self.lm_coef:
      loss += self.lm_coef * sums["lm_loss_sum"] / tf.maximum(sums["lm_weight"], 1.0)
    return loss

  def metrics(self, sums):
    out = {"task_loss": sums["task_loss_sum"] / tf.maximum(sums["examples"], 1.0)}
    if self.lm_coef:
      out["lm_loss"] = sums["lm_loss_sum"] / tf.maximum(sums["lm_weight"], 1.0)
    return out
