"""Writes tests/compat/fixtures/: files saved by this version (0.1.0) of the code, tiny configs.

Run by hand (it is not a test and no test runs it), only in a commit that changes one of these
formats on purpose; that commit then says so and commits the new fixtures with it:

  cd <repo> && PYTHONPATH=$PWD TF_CPP_MIN_LOG_LEVEL=2 python tests/compat/make_fixtures.py

Every file is written by the project's public entry points, the ones the scripts call, so the
fixtures are what users of that commit have on disk:
  - create_pretraining_data's pipeline (`pretraining_data_pipeline.run`): pretraining records;
  - `run_pretraining(TrainingConfig)`: a model_dir with Trainer checkpoints (optimizer slots, step,
    dropout seed states) and export/{encoder.weights.h5, encoder.keras, model_config.json, vocab.txt};
  - `BertPretrainer.save` (as convert_checkpoint writes pretrainer.keras);
  - `run_finetuning(TaskConfig, RunConfig)`: the polarity classifier's model.keras, task_info.json;
  - `run_export(ExportConfig)`: its text-in SavedModel;
  - `run_train_bpe` + `run_gpt_pretraining(TrainingConfig)` (run_pretraining.py --model=gpt_nano):
    GPT-1's decoder.keras and bpe.model;
and the outputs each gives on fixed inputs (expected_*.npz, expected_savedmodel.json), which
tests/compat/test_saved_files.py compares the current code against.

The pretraining model_dir is a finished 2-step run; expected_resume.npz holds what re-running its
command with num_train_steps=3 reached (resumed from ckpt-2), which the current code must reproduce. Paths inside the written JSON files are relative
to the repository root (the generator runs from there), so the fixtures work from any clone.
Rewriting the folder replaces every file in it.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION = "0.1.0"
FIXTURES = os.path.join("tests", "compat", "fixtures")  # relative to ROOT

VOCAB_SIZE = 160
MODEL = dict(vocab_size=VOCAB_SIZE, num_layers=2, hidden_size=32, num_heads=4,
             intermediate_size=64, max_position_embeddings=32)
SEQ_LENGTH = 16
MAX_PREDICTIONS = 3
TEXTS = ["a very good film .", "the worst movie of the year , and not funny",
         "it is what it is"]


def path(*parts: str) -> str:
  return os.path.join(FIXTURES, *parts)


def fixed_inputs() -> dict:
  """Two packed rows ([CLS] a [SEP] b [SEP], right padding) and masked positions: the inputs of
  every expected output."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  ids = np.zeros((2, SEQ_LENGTH), np.int32)
  ids[0, :10] = [101, 120, 131, 142, 103, 102, 150, 111, 159, 102]
  ids[1, :7] = [101, 105, 103, 140, 102, 133, 102]
  mask = (ids != 0).astype(np.int32)
  types = np.zeros_like(ids)
  types[0, 6:10] = 1
  types[1, 5:7] = 1
  positions = np.array([[4, 2, 7], [2, 5, 0]], np.int32)
  return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types,
          "masked_lm_positions": positions}


def encoder_inputs() -> dict:
  return {k: v for k, v in fixed_inputs().items() if k != "masked_lm_positions"}


def numpy_outputs(outputs) -> dict:
  import numpy as np  # pylint: disable=import-outside-toplevel
  flat = {}
  for key, value in outputs.items():
    if isinstance(value, (list, tuple)):
      for i, v in enumerate(value):
        flat[f"{key}_{i}"] = np.asarray(v)
    else:
      flat[key] = np.asarray(value)
  return flat


def write_vocab() -> str:
  """bert-base-uncased's first 104 entries ([PAD], [unused*], [UNK] 100, [CLS] 101, [SEP] 102,
  [MASK] 103) and the most frequent whole words of the pretraining and polarity texts: 160 lines."""
  from bert_keras import resources  # pylint: disable=import-outside-toplevel
  with open(resources.uncased_vocab_path(), encoding="utf-8") as f:
    full = [line.rstrip("\n") for line in f]
  known = set(full)
  counts = collections.Counter()
  for source in (resources.lee_background_path(), resources.polarity_path()):
    with open(source, encoding="utf-8", errors="replace") as f:
      for line in f:
        counts.update(w for w in re.findall(r"[a-z]+|[.,!?']", line.lower().replace(
            "__label__pos", "").replace("__label__neg", "")) if w in known)
  words = [w for w, _ in counts.most_common() if w not in full[:104]]
  vocab = full[:104] + words[:VOCAB_SIZE - 104]
  assert len(vocab) == VOCAB_SIZE
  out = path("vocab.txt")
  with open(out, "w", encoding="utf-8") as f:
    f.writelines(token + "\n" for token in vocab)
  return out


def write_records(vocab: str, work: str) -> str:
  """8 Lee news documents through create_pretraining_data's pipeline: one shard + summary.json."""
  from bert_keras import resources  # pylint: disable=import-outside-toplevel
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    lines = [line for line in f if line.strip()][:8]
  corpus = os.path.join(work, "corpus.txt")
  with open(corpus, "w", encoding="utf-8") as f:
    f.writelines(lines)
  out = path("pretraining_records")
  argv = [f"--input_files={corpus}", "--input_format=lines", f"--output_dir={out}",
          f"--vocab_file={vocab}", f"--max_seq_length={SEQ_LENGTH}",
          f"--max_predictions_per_seq={MAX_PREDICTIONS}", "--num_shards=1", "--dupe_factor=1",
          "--direct_running_mode=in_memory", "--direct_num_workers=1"]
  from bert_keras.data.pretraining_data_pipeline import run  # pylint: disable=import-outside-toplevel
  summary = run(argv)
  print("records:", {k: summary[k] for k in ("documents", "instances")})
  return os.path.join(out, "pretraining-*.tfrecord")


def pretraining_config(records: str, vocab: str, model_dir: str, steps: int):
  from bert_keras.configs.training import TrainingConfig  # pylint: disable=import-outside-toplevel
  return TrainingConfig.from_flat(
      input_files=records, vocab_file=vocab, max_seq_length=SEQ_LENGTH,
      max_predictions_per_seq=MAX_PREDICTIONS, shuffle_buffer_size=64, model="bert_tiny",
      model_overrides=dict(MODEL), train_batch_size=8, num_train_steps=steps, num_warmup_steps=0,
      learning_rate=1e-3, checkpoint_every=2, keep_checkpoints=3, log_every=1, seed=42,
      deterministic=True, output_dir=model_dir)


def restored_pretrainer(config, prefix: str):
  """The pretrainer of `config` with the model variables of the Trainer checkpoint `prefix`."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  from bert_keras.training.pretrain import build_pretrainer  # pylint: disable=import-outside-toplevel
  from bert_keras.training.trainer import model_variables  # pylint: disable=import-outside-toplevel
  model = build_pretrainer(config)
  model(fixed_inputs(), training=False)
  tf.train.Checkpoint(model=model_variables(model)).restore(prefix).assert_existing_objects_matched().expect_partial()
  return model


def optimizer_slot_norms(prefix: str) -> dict:
  """{shape-and-norm list} of the optimizer's variables in a Trainer checkpoint: the L2 norm of
  each slot, sorted, keyed by the slot's shape (independent of variable names and order)."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  reader = tf.train.load_checkpoint(prefix)
  norms, iterations = [], None
  for name, shape in tf.train.list_variables(prefix):
    if not name.startswith("optimizer/"):
      continue
    value = reader.get_tensor(name)
    if "iteration" in name:
      iterations = int(value)
    elif shape:  # the slots (first and second moments); scalars are the schedule's state
      norms.append(float(np.linalg.norm(value.astype(np.float64))))
  return {"iterations": iterations, "slot_norms": sorted(norms)}


def write_pretraining(records: str, vocab: str, work: str) -> None:
  """A finished 2-step run (model_dir: ckpt-2 with optimizer slots, training_config.json,
  history.jsonl, export/), the pretrainer .keras, and what resuming it for one more step gives."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  from bert_keras.training.pretrain import run_pretraining  # pylint: disable=import-outside-toplevel

  model_dir = path("pretraining_model_dir")
  config = pretraining_config(records, vocab, model_dir, steps=2)
  run_pretraining(config)
  step2 = os.path.join(model_dir, "ckpt-2")
  pretrainer2 = restored_pretrainer(config, step2)
  slots = optimizer_slot_norms(step2)
  np.savez(path("expected_checkpoint_step_2.npz"), slot_norms=np.array(slots["slot_norms"]),
           iterations=np.int64(slots["iterations"]),
           **numpy_outputs(pretrainer2(fixed_inputs(), training=False)))
  encoder = pretrainer2.encoder  # the weights export/ holds
  np.savez(path("expected_encoder.npz"), **numpy_outputs(encoder(encoder_inputs(), training=False)))
  # The pretrainer .keras (as convert_checkpoint writes pretrainer.keras: model.save).
  pretrainer2.save(path("pretrainer.keras"))
  np.savez(path("expected_pretrainer.npz"),
           **numpy_outputs(pretrainer2(fixed_inputs(), training=False)))

  # Re-running the same command with a longer schedule (num_train_steps 3) resumes from ckpt-2.
  resumed = os.path.join(work, "resumed")
  shutil.copytree(model_dir, resumed)
  run_pretraining(config.override(output_dir=resumed, num_train_steps=3))
  history = [json.loads(line) for line in open(os.path.join(resumed, "history.jsonl"),
                                                encoding="utf-8")]
  loss3 = [row["loss"] for row in history if row["step"] == 3 and row["split"] == "train"]
  step3 = os.path.join(resumed, "ckpt-3")
  slots3 = optimizer_slot_norms(step3)
  pretrainer3 = restored_pretrainer(config, step3)
  np.savez(path("expected_resume.npz"), train_loss_step_3=np.float64(loss3[0]),
           slot_norms=np.array(slots3["slot_norms"]), iterations=np.int64(slots3["iterations"]),
           **numpy_outputs(pretrainer3(fixed_inputs(), training=False)),
           **{f"encoder/{k}": v for k, v in numpy_outputs(
               pretrainer3.encoder(encoder_inputs(), training=False)).items()})


def write_finetuning(vocab: str, work: str) -> None:
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  from bert_keras import keras_classes  # pylint: disable=import-outside-toplevel
  from bert_keras.export.export_config import ExportConfig, run_export  # pylint: disable=import-outside-toplevel
  from bert_keras.tasks.finetuning import RunConfig, run_finetuning  # pylint: disable=import-outside-toplevel
  from bert_keras.configs.tasks import get_task_config  # pylint: disable=import-outside-toplevel

  finetune_dir = path("classifier_finetune_dir")
  # A high learning rate, so that 24 steps move the outputs apart for different texts.
  task = get_task_config("polarity", max_seq_length=SEQ_LENGTH, train_batch_size=8, num_epochs=3.0,
                         learning_rate=5e-3, seed=0)
  run_finetuning(task, RunConfig(init_checkpoint=path("pretraining_model_dir"),
                                 output_dir=finetune_dir, max_train_examples=64))
  for name in os.listdir(finetune_dir):  # keep what export and users load
    if name not in ("model.keras", "task_info.json", "vocab.txt", "config.json"):
      remove = shutil.rmtree if os.path.isdir(os.path.join(finetune_dir, name)) else os.remove
      remove(os.path.join(finetune_dir, name))
  classifier = keras_classes.load_model(os.path.join(finetune_dir, "model.keras"))
  np.savez(path("expected_classifier.npz"),
           **numpy_outputs(classifier(encoder_inputs(), training=False)))

  export_dir = path("classifier_savedmodel")
  run_export(ExportConfig(output_dir=export_dir, finetuned_dir=finetune_dir))
  import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
  serve = tf.saved_model.load(export_dir).signatures["serving_default"]
  outputs = serve(text_a=tf.constant(TEXTS))
  values = {k: v.numpy().tolist() for k, v in outputs.items()}
  values["label"] = [label.decode() for label in values["label"]]
  with open(path("expected_savedmodel.json"), "w", encoding="utf-8") as f:
    json.dump({"text_a": TEXTS, "serving_default": values}, f, indent=2, sort_keys=True)
    f.write("\n")
  # saved_model.pb is ~4 MB (the tokenizer's Unicode tables, a constant in several functions,
  # whatever the model's size); xz brings it to ~0.2 MB. The test unpacks it unchanged.
  with tarfile.open(path("classifier_savedmodel.tar.xz"), "w:xz", preset=9) as tar:
    tar.add(export_dir, arcname="classifier_savedmodel")
  shutil.rmtree(export_dir)


def write_gpt(work: str) -> None:
  import numpy as np  # pylint: disable=import-outside-toplevel
  from bert_keras import keras_classes  # pylint: disable=import-outside-toplevel
  from bert_keras import resources  # pylint: disable=import-outside-toplevel
  from bert_keras.gpt.gpt_pretraining import run_gpt_pretraining  # pylint: disable=import-outside-toplevel
  from bert_keras.gpt.lm_data import run_train_bpe  # pylint: disable=import-outside-toplevel
  from bert_keras.configs.training import TrainingConfig  # pylint: disable=import-outside-toplevel

  with open(resources.lee_background_path(), encoding="utf-8") as f:
    lines = [line for line in f if line.strip()][:40]
  corpus = os.path.join(work, "gpt_corpus.txt")
  with open(corpus, "w", encoding="utf-8") as f:
    f.writelines(lines)
  bpe = os.path.join(work, "bpe.model")
  run_train_bpe([], [corpus], 200, bpe)
  out = os.path.join(work, "gpt")
  recipe = TrainingConfig.from_file(os.path.join("configs", "training", "gpt1.json"))
  run_gpt_pretraining(recipe.override(
      model="gpt_nano", bpe_model=bpe, input_files=corpus, output_dir=out, num_train_steps=2,
      num_warmup_steps=1, train_batch_size=4, max_seq_length=SEQ_LENGTH,
      max_predictions_per_seq=MAX_PREDICTIONS))
  os.makedirs(path("gpt_pretraining_dir"))
  for name in ("decoder.keras", "bpe.model", "training_config.json"):
    shutil.copyfile(os.path.join(out, name), path("gpt_pretraining_dir", name))
  decoder = keras_classes.load_model(path("gpt_pretraining_dir", "decoder.keras"))
  inputs = {"input_word_ids": np.array([[5, 17, 42, 9, 100, 3, 0, 0]], np.int32),
            "input_mask": np.array([[1, 1, 1, 1, 1, 1, 0, 0]], np.int32)}
  np.savez(path("expected_gpt_decoder.npz"), **inputs,
           **numpy_outputs(decoder(inputs, training=False)))


def main() -> None:
  os.chdir(ROOT)
  sys.path.insert(0, ROOT)
  import tempfile  # pylint: disable=import-outside-toplevel
  import keras  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel

  if os.path.exists(FIXTURES):
    shutil.rmtree(FIXTURES)
  os.makedirs(FIXTURES)
  keras.utils.set_random_seed(0)
  with tempfile.TemporaryDirectory() as work:
    vocab = write_vocab()
    records = write_records(vocab, work)
    write_pretraining(records, vocab, work)
    write_finetuning(vocab, work)
    write_gpt(work)
  np.savez(path("fixed_inputs.npz"), **fixed_inputs())
  with open(path("fixtures.json"), "w", encoding="utf-8") as f:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    json.dump({"version": VERSION, "written_on_top_of": commit, "model": MODEL, "seq_length": SEQ_LENGTH,
               "max_predictions_per_seq": MAX_PREDICTIONS, "texts": TEXTS,
               "keras": keras.__version__, "tensorflow": __import__("tensorflow").__version__},
              f, indent=2, sort_keys=True)
    f.write("\n")


if __name__ == "__main__":
  main()
