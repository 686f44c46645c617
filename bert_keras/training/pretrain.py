"""BERT pretraining as a library call: `run_pretraining(TrainingConfig)` (paper section 3.1).

Re-running the same call resumes from output_dir's last checkpoint (step, optimizer, data position);
phase 2 starts from the phase-1 checkpoint (`init_checkpoint`). Writes to output_dir: checkpoints,
tensorboard/, training_config.json, history.jsonl, export/ (encoder.weights.h5, encoder.keras,
model_config.json, vocab.txt) and, with eval_input_files, eval_metrics.json.
"""

from __future__ import annotations

import dataclasses
import json
import os

import keras
import tensorflow as tf
from tensorflow.python.framework import config as tf_config  # is_op_determinism_enabled: not public
from absl import logging

from bert_keras.atomic_io import check_output_dir, gfile_write_text
from bert_keras.errors import UserError
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.training import distribute, precision
from bert_keras.training.optimization import WarmupDecaySchedule, create_optimizer
from bert_keras.training.input_files import (InputFiles, check_recorded_sizes, list_files,
                                             resolve_input_files)
from bert_keras.training.pretraining_input import (check_record_shapes,
                                                   corrupt_records_are_user_errors,
                                                   label_frequencies, make_dataset)
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.records_vocab import export_vocab
from bert_keras.training.trainer import Trainer, check_workers_agree, model_variables
from bert_keras.training.vocab_fit import check_vocab_fits
from bert_keras.configs.model import GPT_PRESETS, ConfigError, get_model_config
from bert_keras.configs.training import TrainingConfig


def build_pretrainer(config: TrainingConfig) -> BertPretrainer:
  """The encoder of `config.model_config()` with the heads of `config.model.objective`."""
  encoder = BertEncoder.from_model_config(config.model_config(), name="encoder")
  return BertPretrainer(encoder, objective=config.model.objective, name="pretrainer")


def build_optimizer(config: TrainingConfig) -> keras.optimizers.Optimizer:
  # No clipping here: the Trainer clips the all-reduced gradient.
  optimizer = create_optimizer(config.optimizer.replace(clip_global_norm=0.0))
  return precision.wrap_optimizer(optimizer, config.runtime.mixed_precision)


def _dataset_fn(config: TrainingConfig, files: str | InputFiles, training: bool):
  return lambda ctx, skip_batches=0: make_dataset(config, files, training=training,
                                                   input_context=ctx, skip_batches=skip_batches)


def initialize_from(trainer: Trainer, model: BertPretrainer, config: TrainingConfig) -> None:
  """Warm start from `config.model.init_checkpoint`: a Trainer checkpoint with phase=2 continues
  model, optimizer and step (the paper's one schedule, its last 10% at length 512); another Trainer
  checkpoint gives the model weights; anything else the encoder's, through interop.loader."""
  path = config.model.init_checkpoint
  prefix = tf.train.latest_checkpoint(path) if tf.io.gfile.isdir(path) else path
  if prefix and tf.io.gfile.exists(prefix + ".index") and any(  # a Trainer checkpoint
      name.startswith("model/") for name, _ in tf.train.list_variables(prefix)):
    if config.optimizer.phase == 2:
      trainer.checkpoint.restore(prefix).assert_existing_objects_matched()
      trainer.data_start_step.assign(trainer.global_step)
      first, _ = config.phase_steps()
      if int(trainer.global_step.numpy()) != first:
        logging.warning("init_checkpoint is at step %d, phase 2 was planned to start at %d",
                        int(trainer.global_step.numpy()), first)
    else:
      tf.train.Checkpoint(model=model_variables(model)).restore(prefix).expect_partial()
    logging.info("initialized from %s at step %d", prefix, int(trainer.global_step.numpy()))
    return
  from bert_keras.interop.loader import load_encoder_weights  # pylint: disable=import-outside-toplevel
  load_encoder_weights(model.encoder, path)


def export_encoder(model: BertPretrainer, config: TrainingConfig, export_dir: str,
                   vocab: tuple[str | None, str]) -> None:
  """encoder.weights.h5, encoder.keras, model_config.json and vocab.txt (atomic each), what
  fine-tuning takes. `vocab`: (path, how found) or (None, why none); a failed copy only warns."""
  tf.io.gfile.makedirs(export_dir)
  encoder = model.encoder
  for name, save in (("encoder.weights.h5", encoder.save_weights), ("encoder.keras", encoder.save)):
    tmp = os.path.join(export_dir, "tmp-" + name)  # keeps the suffix Keras checks
    save(tmp)
    tf.io.gfile.rename(tmp, os.path.join(export_dir, name), overwrite=True)
  gfile_write_text(os.path.join(export_dir, "model_config.json"),
                   config.model_config().to_json() + "\n")
  path, why_not = vocab
  if path:
    try:
      with tf.io.gfile.GFile(path, "rb") as f:
        data = f.read()
      gfile_write_text(os.path.join(export_dir, "vocab.txt"), data)
      return
    except (tf.errors.OpError, OSError) as e:
      why_not = f"copying {path} failed ({type(e).__name__}: {e})"
  logging.warning("no vocab.txt copied to %s: %s; fine-tuning from it needs --vocab_file",
                  export_dir, why_not)


def unigram_baseline(config: TrainingConfig, inputs: InputFiles) -> dict:
  """The training data's most frequent target: held-out accuracy must rise clearly above always
  predicting it to show the model reads the context."""
  counts = label_frequencies(inputs, seq_length=config.data.max_seq_length,
                             max_predictions=config.data.max_predictions_per_seq,
                             objective=config.model.objective,
                             max_records=config.outputs.unigram_baseline_records)
  token_id = int(counts.argmax())
  return {"token_id": token_id, "train_frequency": float(counts[token_id] / counts.sum()),
          "train_targets": float(counts.sum())}


def write_eval_metrics(path: str, baseline: dict, history: list) -> None:
  """eval_metrics.json: the baseline, every evaluation of `history` (resumed runs' too), the last."""
  curve = [row for row in history if row.get("split") == "eval"]
  gfile_write_text(path, json.dumps({"unigram_baseline": baseline, "eval": curve,
                                     "final": curve[-1] if curve else {}},
                                    indent=2, sort_keys=True) + "\n")


# Fields a resume must keep: the checkpoint's layout, the data position, the step's meaning (a
# phase-2 data stream starts at the phase-1 step). Accumulation and float32 <-> mixed_bfloat16 may
# change; input_files is compared as the files it names.
RESUME_FIELDS = ("train_batch_size", "seed", "max_seq_length", "max_predictions_per_seq",
                 "shuffle_buffer_size", "cycle_length", "optimizer", "objective", "phase")

# A changed schedule is a warning, not an error: a longer run or a lower peak is a common, deliberate
# resume, and google-research/bert and Model Garden both rebuild the schedule around the restored step.
SCHEDULE_FIELDS = ("learning_rate", "num_train_steps", "num_warmup_steps", "decay",
                   "end_learning_rate", "decay_power")  # WarmupDecaySchedule's arguments

# The hint of a changed phase (README, "TPU": phase 2's command).
_PHASE_HINT = ("each phase has its own output directory: phase 2 takes a new --output_dir and "
               "--init_checkpoint=<the phase-1 output_dir>, from whose step, optimizer state and "
               "schedule it goes on")


def _resume_values(values: dict, files: tuple | None) -> dict:
  """What a resume compares; `files`: what input_files matched (None: compared as written)."""
  out = {name: values.get(name) for name in RESUME_FIELDS}
  out["loss scaling (mixed_precision mixed_float16)"] = (
      values.get("mixed_precision") == "mixed_float16")
  out["input_files (the files matched)"] = values.get("input_files") if files is None else [
      os.path.abspath(f) if "://" not in f else f for f in files]
  return out


def _recorded_files(patterns) -> tuple | None:
  try:
    return tuple(list_files(patterns))
  except (UserError, TypeError, AttributeError):
    return None


def _model_fields(values: dict) -> dict:
  """The resolved encoder config (raw preset and overrides when they no longer resolve)."""
  overrides = dict(values.get("model_overrides") or {})
  if values.get("objective") == "ltr":
    overrides["attention"] = "causal"
  try:
    return get_model_config(values.get("model"), **overrides).to_dict()
  except (ConfigError, TypeError, ValueError):
    return {"model": values.get("model"), "model_overrides": overrides}


def check_resume_config(config: TrainingConfig, inputs: InputFiles | None) -> None:
  """UserError naming each field (RESUME_FIELDS, the model) in which output_dir's checkpointed run
  differs from `config`: its restore would fail mid-way or go on silently wrong."""
  path = os.path.join(config.outputs.output_dir, "training_config.json")
  if not (tf.train.latest_checkpoint(config.outputs.output_dir) and tf.io.gfile.exists(path)):
    return
  with tf.io.gfile.GFile(path) as f:
    try:
      old = json.load(f)
    except ValueError as e:
      raise UserError(f"{path}: not JSON ({e}); it records the config of the checkpoints in "
                      f"{config.outputs.output_dir}") from None
  if not isinstance(old, dict):
    raise UserError(f"{path}: expected a JSON object (the run's TrainingConfig)")
  old = TrainingConfig.flat_values(old)  # by flat names
  new = config.to_flat()
  files = inputs.files if inputs else None
  same = old.get("input_files") == config.data.input_files
  old_values = _resume_values(old, files if same else _recorded_files(old.get("input_files")))
  new_values = _resume_values(new, files)
  changes = [f"{name}: {old_values[name]!r} in {path}, {new_values[name]!r} now"
             + (f" ({_PHASE_HINT})" if name == "phase" and 2 in (old_values[name],
                                                                    new_values[name]) else "")
             for name in old_values if old_values[name] != new_values[name]]
  old_model, new_model = _model_fields(old), _model_fields(new)
  for name in sorted(set(old_model) | set(new_model)):
    if old_model.get(name) != new_model.get(name):
      changes.append(f"model {name} (model / model_overrides): {old_model.get(name)!r} in "
                     f"{path}, {new_model.get(name)!r} now")
  if changes:
    raise UserError(
        f"output_dir {config.outputs.output_dir} holds a checkpoint of a run with another config; a "
        f"resume must keep: {'; '.join(changes)}. To go on with another config (a new phase), pass "
        f"--init_checkpoint={config.outputs.output_dir} and a new --output_dir (as phase 2 does), or "
        "give the old values again to resume")
  _log_schedule_change(old, config, path)


def _log_schedule_change(old: dict, config: TrainingConfig, path: str) -> None:
  changed = [name for name in SCHEDULE_FIELDS if old.get(name) != config.to_flat()[name]]
  if not changed:
    return
  step = _restored_step(config.outputs.output_dir)
  rates = ""
  try:
    before, after = (WarmupDecaySchedule(**{name: values[name] for name in SCHEDULE_FIELDS})
                     for values in (old, config.to_flat()))
    rates = (f"; the update after step {step} uses learning rate "
             f"{float(after(step)):.4g}, the recorded schedule's {float(before(step)):.4g}")
  except (KeyError, TypeError, ValueError, UserError):  # a recorded schedule that no longer builds
    pass
  logging.warning(
      "resuming output_dir %s at step %d with another learning-rate schedule (%s)%s. The steps "
      "before followed the recorded schedule: the result is neither run's schedule. Intended (a "
      "longer run, a lower peak)? Go on; if not, give the recorded values again",
      config.outputs.output_dir,
      step, "; ".join(f"{name}: {old.get(name)!r} in {path}, {config.to_flat()[name]!r} now"
                      for name in changed), rates)


@dataclasses.dataclass(frozen=True)
class PretrainingInputs:
  """A run's inputs, resolved once before training; nothing lists a file again."""
  train: InputFiles  # --input_files
  evaluation: InputFiles | None  # --eval_input_files, None without
  vocab: tuple  # (the vocab.txt export/ gets, how it was found), or (None, why none)


def resolve_inputs(config: TrainingConfig) -> PretrainingInputs:
  """Resolves each input flag once and runs every check a run can fail before it trains (and
  before output_dir is written): the resumed config first, the records, their recorded sizes and
  vocabulary, init_checkpoint, and the vocab.txt export/ will get."""
  try:
    train = resolve_input_files(config.data.input_files)
  except UserError:
    check_resume_config(config, None)  # first: compared with the patterns as given
    raise
  check_resume_config(config, train)
  _check_records(config, train, True)
  evaluation = None
  if config.data.eval_input_files:
    evaluation = resolve_input_files(config.data.eval_input_files)
    _check_records(config, evaluation, False)
  checked = [("input_files", train)] + ([("eval_input_files", evaluation)] if evaluation else [])
  for flag, inputs in checked:
    check_recorded_sizes(inputs, flag)
  vocab_size = config.model_config().vocab_size
  for flag, inputs in checked:
    check_vocab_fits(inputs, flag, vocab_size, config.model.model,
                     dict(config.model.model_overrides))
  path = config.model.init_checkpoint
  if path and not tf.train.latest_checkpoint(config.outputs.output_dir) and not (
      tf.io.gfile.exists(path) or tf.io.gfile.exists(path + ".index")):
    raise UserError(f"init_checkpoint {path}: no such file or directory")
  vocab = export_vocab(config.data.vocab_file, train, vocab_size)
  if vocab[0]:
    logging.info("export/vocab.txt will be a copy of %s (%s)", vocab[0], vocab[1])
  else:
    logging.warning("no vocab.txt will be copied to export/: %s; pass --vocab_file=<the vocab.txt "
                    "the records were made with> to have one", vocab[1])
  return PretrainingInputs(train=train, evaluation=evaluation, vocab=vocab)


def _check_records(config: TrainingConfig, inputs: InputFiles, training: bool) -> None:
  """Every file's first record has the configured lengths; the input pipeline builds."""
  check_record_shapes(list(inputs.files), config.data.max_seq_length,
                      config.data.max_predictions_per_seq)
  make_dataset(config, inputs, training=training)


def _restored_step(model_dir: str) -> int:
  """The latest checkpoint's global step (0 without one), read without a model."""
  latest = tf.train.latest_checkpoint(model_dir)
  if not latest:
    return 0
  reader = tf.train.load_checkpoint(latest)
  name = "global_step/.ATTRIBUTES/VARIABLE_VALUE"
  return int(reader.get_tensor(name)) if reader.has_tensor(name) else -1


def _after_corrupt_input(config: TrainingConfig) -> str:
  latest = tf.train.latest_checkpoint(config.outputs.output_dir)
  resume = (f"the last checkpoint, {latest} (step {_restored_step(config.outputs.output_dir)}), is "
            "intact" if latest else "no checkpoint was written yet")
  return (f"training stopped; {resume}; replace the file with an intact copy of the same name (or "
          "write it again) and re-run the same command to resume (other files would be another "
          "run, which a resume refuses)")


def run_pretraining(config: TrainingConfig) -> dict:
  """Trains (or resumes) per `config`; returns the last train/eval metrics."""
  if not config.outputs.output_dir:
    raise UserError("--output_dir is required")
  if not config.data.input_files:
    raise UserError("input_files is required")
  if config.model.model in GPT_PRESETS or config.data.bpe_model or config.data.corpora:
    raise UserError("GPT-1 (model gpt_*, bpe_model, corpora) pretrains on text through "
                    "bert_keras.gpt.gpt_pretraining, which scripts/run_pretraining.py runs for it")
  keras.utils.set_random_seed(config.runtime.seed)
  if not config.runtime.deterministic or tf_config.is_op_determinism_enabled():
    return _run_pretraining(config)
  # Process-wide: turned off again so that later code in the process is unaffected.
  tf.config.experimental.enable_op_determinism()
  try:
    return _run_pretraining(config)
  finally:
    tf_config.disable_op_determinism()


def _run_pretraining(config: TrainingConfig) -> dict:
  check_output_dir(config.outputs.output_dir)
  strategy = distribute.get_strategy(config.runtime.distribution_strategy,
                                     tpu=config.runtime.tpu or None,
                                     num_gpus=config.runtime.num_gpus)
  is_chief = distribute.is_chief(strategy)
  # Workers agree on the checkpoint before any can fail alone (the rest would hang in a collective).
  check_workers_agree(strategy, _restored_step(config.outputs.output_dir), config.outputs.output_dir)
  inputs = resolve_inputs(config)
  train_files, eval_files = inputs.train, inputs.evaluation
  precision.set_precision(config.runtime.mixed_precision)  # process-wide: only once the checks passed
  logging.info("strategy %s with %d replica(s), precision %s", type(strategy).__name__,
               strategy.num_replicas_in_sync, config.runtime.mixed_precision)

  baseline = unigram_baseline(config, train_files) if eval_files else None
  if baseline:
    logging.info("unigram baseline: always predicting token %d (%.4f of the training targets)",
                 baseline["token_id"], baseline["train_frequency"])
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  task = PretrainingTask(config.model.objective, unigram_id=baseline and baseline["token_id"],
                         nsp_weight=config.model.nsp_loss_weight)
  trainer = Trainer(strategy, model, optimizer, task, config, jit_loss=True,
                    history_path=os.path.join(config.outputs.output_dir, "history.jsonl"))
  if not trainer.restore() and config.model.init_checkpoint:
    initialize_from(trainer, model, config)
  # Only now (inputs checked, the checkpoint restored) does the run create and write output_dir.
  tf.io.gfile.makedirs(config.outputs.output_dir)
  if is_chief:
    gfile_write_text(os.path.join(config.outputs.output_dir, "training_config.json"),
                     config.to_json() + "\n")

  eval_fn = None
  if eval_files:
    eval_data = _dataset_fn(config, eval_files, False)
    metrics_path = os.path.join(config.outputs.output_dir, "eval_metrics.json")

    def eval_fn():
      with corrupt_records_are_user_errors(eval_files, "eval_input_files",
                                           lambda: _after_corrupt_input(config)):
        metrics = trainer.evaluate(eval_data, config.outputs.eval_steps)
      if is_chief:
        write_eval_metrics(metrics_path, baseline, trainer.full_history())
      return metrics
  _, end_step = config.phase_steps()
  train_data = _dataset_fn(config, train_files, True)
  # A file damaged past its first record fails in tf.data naming no file: then it is found and named.
  with corrupt_records_are_user_errors(train_files, "input_files",
                                       lambda: _after_corrupt_input(config)):
    history = trainer.train(train_data, end_step, eval_fn=eval_fn,
                            eval_every=config.outputs.eval_every)

  if is_chief:
    trainer.write_history()
    export_encoder(model, config, os.path.join(config.outputs.output_dir, "export"), inputs.vocab)
  return {row["split"]: row for row in history}  # the last row of each split
