"""Fine-tune any registered task: read, featurize, train with `fit`, evaluate on dev, write outputs
(the README's "What a run writes"; metrics are 0-100 for every task, as the official scripts print
them). Outputs are staged and moved in only once complete (`write_staged`); a failed run leaves an
earlier run's outputs as they were.
"""

from __future__ import annotations

import dataclasses
import glob
import math
import os
import random
import shutil
import time
from typing import TYPE_CHECKING, Any, Callable

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from bert_keras.atomic_io import check_output_dir, missing_dirs, new_stage, write_json
from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file
from bert_keras.configs.finetuning import RunConfig
from bert_keras.configs.model import ModelConfig, get_model_config, MODEL_PRESETS
from bert_keras.configs.tasks import TaskConfig
from bert_keras.configs.training import FINETUNE_DISTRIBUTIONS, OptimizerConfig
from bert_keras.tasks import length_batches
from bert_keras.tasks.finetuning_checks import check_output_task, unknown_model_config
from bert_keras.tasks.registry import get_task
from bert_keras.tasks.task import Features
from bert_keras.training.dataset_options import without_autotune
from bert_keras.training.progress_callback import ProgressCallback
from bert_keras.training.scalar_summaries import TENSORBOARD_DIR, ScalarSummaries

if TYPE_CHECKING:
  from bert_keras.interop.loader import CheckpointPath


def _config_only(spec: str) -> ModelConfig | None:
  """The config of a preset or a ModelConfig JSON file (a .json with vocab_size and hidden_size):
  no weights, no vocab.txt. None for anything else."""
  if spec in MODEL_PRESETS:
    return get_model_config(spec)
  if os.path.isfile(spec) and spec.endswith(".json"):
    values = read_json_file(spec, "model config JSON file", expected=dict)
    if "vocab_size" in values and "hidden_size" in values:
      return ModelConfig.from_file(spec)
  return None


def resolve_model_config(spec: str) -> tuple[ModelConfig, str | None, bool | None]:
  """(config, vocab beside it, casing) from a preset name, a ModelConfig JSON or a checkpoint."""
  config = _config_only(spec)
  if config is not None:
    return config, None, None
  if os.path.exists(spec) or os.path.exists(spec + ".index"):
    from bert_keras.interop.loader import open_checkpoint
    info = open_checkpoint(spec).info
    return info.config, info.vocab_path, info.lower_case
  raise unknown_model_config(spec)


def bert_tokenizer(vocab: str, encoder, *casings):
  """`vocab`'s tokenizer, cased as the first of `casings` not None (uncased when none says), for
  `encoder` (None: no check), whose vocab_size it must match."""
  from bert_keras.text.bert_tokenizer import BertTokenizer
  lower_case = next((bool(c) for c in casings if c is not None), True)
  tokenizer = BertTokenizer(vocab_path=vocab, lower_case=lower_case)
  if encoder is not None and encoder.model_config.vocab_size != tokenizer.vocab_size:
    raise UserError(f"{vocab}: {tokenizer.vocab_size} tokens but the encoder has "
                    f"vocab_size={encoder.model_config.vocab_size}")
  return tokenizer


def check_sequence_length(max_seq_length: int, config: ModelConfig, source: str) -> None:
  """Longer inputs than `max_position_embeddings` cannot be embedded (Keras would fail deep inside
  the model with a shape error)."""
  if max_seq_length > config.max_position_embeddings:
    raise UserError(f"max_seq_length={max_seq_length} exceeds max_position_embeddings="
                    f"{config.max_position_embeddings} of {source}; expected --max_seq_length <= "
                    f"{config.max_position_embeddings}")


@dataclasses.dataclass(frozen=True)
class EncoderSource:
  """--init_checkpoint or --model, resolved once before any data is read."""
  spec: str  # the flag's value, as messages name it
  checkpoint: CheckpointPath | None  # --init_checkpoint's; None: random initialisation
  config: ModelConfig | None  # None only for a .keras checkpoint (known once loaded)
  vocab_path: str | None = None  # the vocab.txt beside a --model checkpoint
  lower_case: bool | None = None  # that checkpoint's casing
  config_only: bool = False  # --model is a preset or ModelConfig JSON: no vocab.txt


def resolve_encoder_source(run: RunConfig) -> EncoderSource:
  """--init_checkpoint (its config read without weights, except for a .keras file) or else
  --model; UserError when neither is given or the path names nothing."""
  from bert_keras import interop

  if run.init_checkpoint:
    checkpoint = interop.resolve_checkpoint(run.init_checkpoint)
    config = None if checkpoint.format == "keras" else interop.open_checkpoint(
        checkpoint, read_weights=False).info.config
    return EncoderSource(run.init_checkpoint, checkpoint, config)
  if not run.model:
    raise UserError("pass --init_checkpoint (to fine-tune) or --model (random init)")
  config = _config_only(run.model)
  if config is not None:
    return EncoderSource(run.model, None, config, config_only=True)
  config, vocab, lower_case = resolve_model_config(run.model)
  return EncoderSource(run.model, None, config, vocab, lower_case)


def build_encoder(source: EncoderSource, task_config: TaskConfig, dtype=None):
  """(encoder, description dict, vocab path or None, lower_case or None)."""
  from bert_keras import interop
  from bert_keras.models.bert_encoder import BertEncoder
  if source.checkpoint is not None:
    encoder, info = interop.load_encoder(source.checkpoint, dropout_rate=task_config.dropout_rate,
                                         dtype=dtype)
    check_sequence_length(task_config.max_seq_length, encoder.model_config, source.spec)
    described = {"init": "checkpoint", "format": info.format, "path": info.path,
                 "loaded": len(info.loaded), "missing": info.missing}
    return encoder, described, info.vocab_path, info.lower_case
  config = source.config.replace(dropout_rate=task_config.dropout_rate)
  encoder = BertEncoder.from_model_config(config, dtype=dtype)
  return encoder, {"init": "random", "model_config": source.spec}, source.vocab_path, \
      source.lower_case


@dataclasses.dataclass(frozen=True)
class LoadedEncoder:
  """What a model family gives a fine-tuning run (`ModelFamily.load`)."""
  encoder: keras.Model
  tokenizer: Any
  described: dict  # config.json's "encoder": where the weights came from
  files: dict  # {name in the output directory: the file copied there} (the vocabulary)
  info: dict  # task_info.json's tokenizer settings: what the exporter reads
  lower_case: bool | None = None


class ModelFamily:
  """How a fine-tuning run gets its encoder and tokenizer, and what it evaluates and saves: BERT's.
  Another family (GPT-1's decoder and BPE) subclasses it and is its tasks' `Task.model_family`."""

  def resolve(self, run: RunConfig, task_config: TaskConfig):
    """The encoder source, checked before any data is read: the sequence length against its config
    (a .keras checkpoint's: once loaded); a preset or ModelConfig JSON has no vocab.txt."""
    source = resolve_encoder_source(run)
    if source.config is not None:
      check_sequence_length(task_config.max_seq_length, source.config, source.spec)
    if source.config_only and not run.vocab_file:
      raise UserError(f"--vocab_file is needed when no checkpoint is given: --model="
                      f"{source.spec} has no vocab.txt (or pass --init_checkpoint to use the "
                      "checkpoint's)")
    return source

  def load(self, source, run: RunConfig, task_config: TaskConfig) -> LoadedEncoder:
    """Builds the encoder (under the strategy's scope) and its tokenizer."""
    from bert_keras.interop import check_tokenizer_casing
    encoder, described, vocab, ckpt_lower = build_encoder(source, task_config)
    vocab = run.vocab_file or vocab
    if not vocab:
      raise UserError(f"{source.spec}: no vocab.txt beside the checkpoint; pass --vocab_file")
    tokenizer = bert_tokenizer(vocab, encoder, run.lower_case, ckpt_lower)
    lower_case = tokenizer.lower_case
    check_tokenizer_casing(ckpt_lower, tokenizer, source.spec)
    return LoadedEncoder(encoder, tokenizer, described, {"vocab.txt": vocab},
                         {"lower_case": lower_case, "vocab_file": "vocab.txt"}, lower_case)

  def serving_model(self, model: keras.Model) -> keras.Model:
    """The model evaluation runs and model.keras holds: the trained one."""
    return model


# The stages of this directory's runs: <output_dir>/.run.staging-<host>-<pid>-<hex> (atomic_io).
STAGE_TARGET = ".run"


def _publish(stage: str, output_dir: str) -> None:
  """Moves every file of the complete `stage` into `output_dir` (one rename each), then removes the
  previous run's outputs this run did not replace (its model.keras, task_info.json, metrics.json,
  predictions_*, tensorboard/), which export or a reader would mix with this run's. Nothing is
  removed before the new outputs exist."""
  new = sorted(os.listdir(stage))
  for name in new:
    target = os.path.join(output_dir, name)
    if os.path.isdir(os.path.join(stage, name)) and os.path.isdir(target):
      shutil.rmtree(target)  # the earlier run's events (a rename cannot replace a directory)
    os.replace(os.path.join(stage, name), target)
  stale = [os.path.join(output_dir, name)
           for name in ("model.keras", "task_info.json", "metrics.json") if name not in new]
  if TENSORBOARD_DIR not in new and os.path.isdir(os.path.join(output_dir, TENSORBOARD_DIR)):
    shutil.rmtree(os.path.join(output_dir, TENSORBOARD_DIR))
  stale += [path for path in glob.glob(os.path.join(glob.escape(output_dir), "predictions_*"))
            if os.path.basename(path) not in new]
  for path in stale:
    if os.path.isfile(path):
      os.remove(path)
  os.rmdir(stage)


def make_dataset(features: Features, batch_size: int, seed: int,
                 buckets: tuple[int, ...]) -> tf.data.Dataset:
  """Endless shuffled training batches, each padded to one of `buckets`."""
  if features.labels is None:
    raise UserError("the training split has no labels")
  batches = length_batches.train_batches(features.inputs, features.labels, batch_size, seed,
                                         buckets)
  # Without the autotuner, whose thread held the end of `fit` for 18 s in half of the runs.
  return without_autotune(batches.prefetch(tf.data.AUTOTUNE))


class EpochSummaries(keras.callbacks.Callback):
  """TensorBoard scalars at each epoch's end, at its last global step: train/loss (the epoch's
  mean), its parts (`Task.loss_parts`), train/learning_rate; `write` adds the evaluation's metrics.
  `seconds`: each epoch's wall time, begin to end callback (fit's teardown is in none)."""

  def __init__(self, logdir: str, loss_parts: dict):
    super().__init__()
    self.summaries = ScalarSummaries(logdir)
    self.loss_parts = {"loss": "loss", **loss_parts}
    self.step = 0
    self.seconds: list[float] = []
    self._begin = 0.0

  def on_epoch_begin(self, epoch, logs=None):
    self._begin = time.time()

  def on_epoch_end(self, epoch, logs=None):
    self.seconds.append(round(time.time() - self._begin, 2))
    self.step = (epoch + 1) * (self.params.get("steps") or 0)
    scalars = {"train/learning_rate": float(np.asarray(self.model.optimizer.learning_rate))}
    scalars.update({f"train/{name}": float(logs[key]) for key, name in self.loss_parts.items()
                    if key in (logs or {})})
    self.summaries.write(self.step, scalars)
    self.summaries.flush()  # an open TensorBoard sees each epoch as it ends

  def write(self, scalars: dict) -> None:
    self.summaries.write(self.step, scalars)

  def close(self) -> None:
    self.summaries.close()


def write_staged(output_dir: str, write: Callable[[str], Any]) -> Any:
  """Runs `write(stage)` on a new staging directory inside `output_dir`, then publishes it
  (`_publish`); on any failure removes the stage and the (empty) directories this call created."""
  check_output_dir(output_dir)
  created = missing_dirs(output_dir)
  stage = None
  try:
    stage = new_stage(os.path.join(output_dir, STAGE_TARGET))
    result = write(stage)
    _publish(stage, output_dir)
    return result
  except BaseException:
    if stage is not None and os.path.isdir(stage):
      shutil.rmtree(stage, ignore_errors=True)
    for path in created:  # deepest first; a directory that holds anything else stays
      try:
        os.rmdir(path)
      except OSError:
        break
    raise


def run_finetuning(task_config: TaskConfig, run: RunConfig) -> dict:
  """Trains `task_config.task` and evaluates it on its dev split(s); returns the metrics dict."""
  if not run.output_dir:
    raise UserError("--output_dir is required")
  check_output_dir(run.output_dir)
  check_output_task(run.output_dir, task_config.task)
  if run.distribution_strategy not in FINETUNE_DISTRIBUTIONS:
    raise UserError(f"distribution_strategy={run.distribution_strategy!r}: fine-tuning supports "
                    f"{FINETUNE_DISTRIBUTIONS}")
  task = get_task(task_config)
  family = task.model_family or ModelFamily()
  source = family.resolve(run, task_config)
  # The one --data_dir rule ('' = the embedded data), resolved once: config.json records the path.
  run = run.replace(data_dir=task.resolve_data_dir(run.data_dir))
  keras.utils.set_random_seed(task_config.seed)
  return write_staged(run.output_dir,
                      lambda stage: _train_and_write(task_config, run, family, source, stage))


def _train_and_write(task_config: TaskConfig, run: RunConfig, family: ModelFamily, source,
                     stage: str) -> dict:
  """Reads, trains, evaluates and writes every output to `stage`; returns the metrics dict."""
  from bert_keras.training.distribute import get_strategy
  from bert_keras.training.optimization import create_optimizer
  from bert_keras.training.precision import set_precision, wrap_optimizer

  task = get_task(task_config)

  # === Data ===
  train_examples = task.read_examples(run.data_dir, task.train_split)
  if 0 < run.max_train_examples < len(train_examples):  # a seeded subset, in file order
    keep = random.Random(task_config.seed).sample(range(len(train_examples)), run.max_train_examples)
    train_examples = [train_examples[i] for i in sorted(keep)]
  eval_examples = {split: task.read_examples(run.data_dir, split) for split in task.eval_splits}
  task.prepare_labels(train_examples, eval_examples)

  # === Model ===
  set_precision(run.mixed_precision)
  strategy = get_strategy(run.distribution_strategy)
  with strategy.scope():
    loaded = family.load(source, run, task_config)
    encoder, encoder_desc, tokenizer = loaded.encoder, loaded.described, loaded.tokenizer
    model = task.build_model(encoder)
    train_features = task.make_features(train_examples, tokenizer, training=True)
    steps_per_epoch = max(1, math.ceil(len(train_features) / task_config.train_batch_size))
    total_steps = max(1, math.ceil(steps_per_epoch * task_config.num_epochs))
    epochs = max(1, math.ceil(task_config.num_epochs))
    optimizer = create_optimizer(OptimizerConfig(
        learning_rate=task_config.learning_rate, num_train_steps=total_steps,
        num_warmup_steps=int(task_config.warmup_proportion * total_steps),
        weight_decay_rate=task_config.weight_decay_rate))
    model.compile(optimizer=wrap_optimizer(optimizer, run.mixed_precision), **task.compile_kwargs())
    # The Adam slots made now: Keras otherwise creates them inside the first step's trace, and a
    # tf.function whose first trace creates variables traces everything again (MiniLM's first
    # step 17 -> 7 s on 2 cores; bench/bench_finetune_lengths.py's first-epoch column).
    model.optimizer.build(model.trainable_variables)

  # The previous run's outputs stay in run.output_dir until `_publish` (its model.keras may also
  # be this run's --init_checkpoint).
  resolved = {"task": task_config.to_dict(), "run": run.to_dict(),
              "model": encoder.model_config.to_dict(), "encoder": encoder_desc,
              "vocab_file": next(iter(loaded.files.values())), "lower_case": loaded.lower_case,
              "total_steps": total_steps}
  write_json(os.path.join(stage, "config.json"), resolved)

  # === Train ===
  buckets = length_batches.batch_lengths(task_config.max_seq_length, run.length_buckets)
  dataset = make_dataset(train_features, task_config.train_batch_size, task_config.seed, buckets)
  start = time.time()
  # Events in the stage: an open `tensorboard --logdir <output_dir>` sees them as they come (it
  # reads hidden directories); published with the other outputs as <output_dir>/tensorboard.
  summaries = EpochSummaries(os.path.join(stage, TENSORBOARD_DIR), task.loss_parts)
  history = model.fit(dataset, epochs=epochs, steps_per_epoch=math.ceil(total_steps / epochs),
                      shuffle=False, verbose=0,  # the dataset is shuffled
                      callbacks=[summaries, ProgressCallback()])
  train_seconds = time.time() - start

  # === Evaluate ===
  results: dict = {"task": task.run_name(), "train_examples": len(train_examples),
                   "train_features": len(train_features), "train_steps": total_steps,
                   "train_seconds": round(train_seconds, 1), "epoch_seconds": summaries.seconds,
                   "batch_lengths": list(buckets),
                   "final_train_loss": float(history.history["loss"][-1]),
                   "init": encoder_desc["init"]}
  evaluated = family.serving_model(model)
  for split, examples in eval_examples.items():
    features = task.make_features(examples, tokenizer, training=False)
    outputs = length_batches.predict(evaluated, features.inputs, task_config.eval_batch_size, buckets,
                                     label=f"evaluate {split}")
    predictions = task.postprocess(examples, features, outputs)
    results[split] = task.evaluate(examples, predictions)
    results[split]["examples"] = len(examples)
    task.write_predictions(predictions, os.path.join(stage, f"predictions_{split}"))
    logging.info("%s %s: %s", task.name, split, results[split])
    summaries.write({f"{split}/{name}": value for name, value in results[split].items()
                     if isinstance(value, (int, float)) and name != "examples"})
  summaries.close()
  if task.data_notes:
    results["data"] = task.data_notes  # e.g. the tagging scheme read, answers skipped
  write_json(os.path.join(stage, "metrics.json"), results)

  # === Artifacts for export ===
  info = task.task_info(results[task.eval_splits[0]])
  info.update(loaded.info)
  for name, path in loaded.files.items():  # moved in by one rename, in _publish
    shutil.copyfile(path, os.path.join(stage, name))
  write_json(os.path.join(stage, "task_info.json"), info)
  if run.save_model:
    # An uncompiled copy: the serving artifact carries no optimizer state (3x smaller).
    serving = type(evaluated).from_config(evaluated.get_config())
    serving.set_weights(evaluated.get_weights())
    serving.save(os.path.join(stage, "model.keras"))
  return results
