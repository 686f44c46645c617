"""Pretrainer executor: `bert_keras.training.pretrain.run_pretraining` on the Examples artifact.

Checkpoints stay in the execution's scratch directory; the Model artifact keeps what consumers
need: `encoder/` (encoder.keras, model_config.json, vocab.txt; see checkpoint_importer/executor.py),
`history.jsonl` (plotted as training curves), the resolved `training_config.json`, and
`eval_metrics.json`: masked-LM / NSP accuracy on held-out examples beside the unigram baseline
(for objective "ltr": next-token accuracy, named lm_* instead of mlm_*).

Held-out split: every k-th record (k = round(1 / heldout_fraction)) of the Examples shards is set
aside in the scratch directory and never trained on. The shards are a seeded global shuffle of all
instances, so this is a random example-level split; with dupe_factor > 1 the same sentences can
occur, differently masked and paired, on both sides (studies/pretraining_evidence/README.md measures
the document-level split beside it).
"""

from __future__ import annotations

import json
import os
import shutil

from bert_keras.orchestration.base_executor import BaseExecutor
from components.checkpoint_importer.executor import ENCODER_DIR, record_encoder

# Columns of the trainer's history that are not learning curves.
_NOT_CURVES = ("step", "split", "steps_per_sec", "sequences_per_sec", "learning_rate",
               "elapsed_sec")
_EVAL_BASELINES = ("mlm_unigram_accuracy", "lm_unigram_accuracy", "nsp_majority_accuracy")


def curves_from_history(rows) -> dict:
  """{"train_loss": [[step, value], ...], ...} from history.jsonl rows."""
  curves = {}
  for row in rows:
    for key, value in row.items():
      if row.get("split") == "train" and key in _EVAL_BASELINES:
        continue  # the baselines are curves of the held-out set only
      if key not in _NOT_CURVES and isinstance(value, (int, float)):
        curves.setdefault(f"{row.get('split', 'train')}_{key}", []).append([row["step"], value])
  return curves


def split_heldout(files, out_dir: str, fraction: float, min_heldout: int) -> dict | None:
  """Every k-th record of `files` -> out_dir/heldout.tfrecord, the rest -> out_dir/train.tfrecord.

  Returns {"train": path, "heldout": path, "train_records": n, "heldout_records": m}, or None when
  fewer than `min_heldout` records would be held out (too little data to spare any).
  """
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  from bert_keras.data.pretraining_records import compression_type
  every = max(2, int(round(1.0 / fraction)))
  total = sum(1 for path in files for _ in tf.data.TFRecordDataset(
      path, compression_type=compression_type(path)))
  if total // every < min_heldout:
    return None
  os.makedirs(out_dir, exist_ok=True)
  paths = {name: os.path.join(out_dir, f"{name}.tfrecord") for name in ("train", "heldout")}
  counts = {"train": 0, "heldout": 0}
  with tf.io.TFRecordWriter(paths["train"]) as train, \
       tf.io.TFRecordWriter(paths["heldout"]) as heldout:
    index = 0
    for path in files:
      for record in tf.data.TFRecordDataset(
          path, compression_type=compression_type(path)):
        name = "heldout" if index % every == every - 1 else "train"
        (heldout if name == "heldout" else train).write(record.numpy())
        counts[name] += 1
        index += 1
  return dict(paths, train_records=counts["train"], heldout_records=counts["heldout"])


def read_nsp_padding(paths, num_records: int = 0):
  """NSP labels and padding of the first `num_records` (0: all) records of the TFRecord `paths`.

  Returns (labels, padded): int arrays (n,) of next_sentence_labels (1 = random next) and bool (n,)
  "shorter than the longest input_mask" (padded), or None when the records have no NSP labels.
  """
  import numpy as np  # pylint: disable=import-outside-toplevel
  import tensorflow as tf  # pylint: disable=import-outside-toplevel

  dataset = tf.data.TFRecordDataset(list(paths))
  labels, lengths, width = [], [], 0
  for record in (dataset.take(num_records) if num_records > 0 else dataset):
    feature = tf.train.Example.FromString(record.numpy()).features.feature
    if "next_sentence_labels" not in feature:
      return None
    mask = feature["input_mask"].int64_list.value
    width = max(width, len(mask))
    labels.append(int(feature["next_sentence_labels"].int64_list.value[0]))
    lengths.append(int(np.sum(mask)))
  if not labels:
    return None
  return np.array(labels, dtype=np.int64), np.array(lengths) < width


def nsp_padding_rule(labels, padded) -> dict:
  """The NSP accuracy of a model that only looks at padding: padded -> random next, full -> is next.

  `create_instances_from_document` (as google-research/bert) gives a tenth of the document passes a
  short target length; those passes make many short, often one-sentence chunks, and a one-sentence
  chunk always gets a random next segment. So padded examples are mostly "random next", and this
  rule can beat the majority baseline without comparing A with B (studies/pretraining_evidence/README.md).
  Held-out NSP accuracy has to clear it too. `labels`, `padded`: (n,) from `read_nsp_padding`.
  Returns {"nsp_padding_rule_accuracy", "nsp_padded_fraction"}.
  """
  import numpy as np  # pylint: disable=import-outside-toplevel

  padded = np.asarray(padded, dtype=bool)
  return {"nsp_padding_rule_accuracy": float(np.mean(padded == np.asarray(labels).astype(bool))),
          "nsp_padded_fraction": float(np.mean(padded))}


class PretrainerExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    import glob

    from bert_keras.text.vocab import load_vocab
    from bert_keras.training.pretrain import run_pretraining
    from bert_keras.configs.training import TrainingConfig

    examples, vocabulary, model = inputs["examples"], inputs["vocabulary"], outputs["model"]
    vocab_path = vocabulary.path("vocab.txt")
    tokens = load_vocab(vocab_path)
    index = {t: i for i, t in enumerate(tokens)}
    training = dict(parameters["training"])
    overrides = dict(training.pop("model_overrides", {}), vocab_size=len(tokens))
    model_dir = os.path.join(self.context.tmp_dir, "training")
    data = dict(input_files=examples.path(examples.properties["file_pattern"]))
    batch = int(training.get("train_batch_size", TrainingConfig().data.train_batch_size))
    split = None
    if parameters["heldout_fraction"] > 0:
      split = split_heldout(sorted(glob.glob(data["input_files"])),
                            os.path.join(self.context.tmp_dir, "examples"),
                            parameters["heldout_fraction"], min_heldout=batch)
    if split:
      # The whole held-out set at every evaluation, unless the training parameters say otherwise.
      data = dict(input_files=split["train"], eval_input_files=split["heldout"],
                  eval_steps=int(training.pop("eval_steps", split["heldout_records"] // batch)))
      self.log(f"held out {split['heldout_records']} of "
               f"{split['heldout_records'] + split['train_records']} examples for evaluation")
    elif parameters["heldout_fraction"] > 0:
      self.log(f"too few examples to hold out {parameters['heldout_fraction']:.0%} "
               f"(at least one batch of {batch}): no held-out evaluation")
    # from_flat: a misspelt key in the `training` parameter names the known ones (ConfigError).
    config = TrainingConfig.from_flat(dict(
        training, **data,
        max_seq_length=int(examples.properties["max_seq_length"]),
        max_predictions_per_seq=int(examples.properties["max_predictions_per_seq"]),
        vocab_size=len(tokens), mask_token_id=index["[MASK]"],
        special_token_ids=tuple(index[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
                                if t in index),
        model_overrides=overrides, distribution_strategy=self.context.distribution_strategy,
        output_dir=model_dir, vocab_file=vocab_path))
    self.log(f"pretraining {config.model.model} ({config.model.objective}) for "
             f"{config.optimizer.num_train_steps} steps, batch {config.data.train_batch_size}, "
             f"vocab {len(tokens)}, strategy {config.runtime.distribution_strategy}")
    last = run_pretraining(config)

    encoder_dir = model.path(ENCODER_DIR)
    shutil.copytree(os.path.join(model_dir, "export"), encoder_dir)  # with vocab.txt: vocab_file
    if not os.path.exists(os.path.join(encoder_dir, "vocab.txt")):
      # export_encoder only warns when its copy fails: the artifact must still carry its vocabulary.
      shutil.copyfile(vocab_path, os.path.join(encoder_dir, "vocab.txt"))
    names = ["history.jsonl", "training_config.json"]
    if split:
      names.append("eval_metrics.json")
    for name in names:
      shutil.copyfile(os.path.join(model_dir, name), model.path(name))
    with open(model.path("history.jsonl"), encoding="utf-8") as f:
      model.curves.update(curves_from_history(json.loads(line) for line in f if line.strip()))
    record_encoder(model, config.model_config().to_dict(), "pretrainer")
    model.properties["lower_case"] = bool(vocabulary.properties.get("lower_case", True))
    for split_name, row in last.items():
      model.metrics.update({f"{split_name}_{k}": float(v) for k, v in row.items()
                            if k not in _NOT_CURVES and isinstance(v, (int, float))})
    if split:
      model.metrics["heldout_examples"] = split["heldout_records"]
      if config.model.objective == "mlm_nsp":
        evaluated = config.outputs.eval_steps * (config.data.eval_batch_size
                                                 or config.data.train_batch_size)
        records = read_nsp_padding([split["heldout"]], evaluated)
        if records is not None:
          model.metrics.update({f"eval_{k}": v for k, v in nsp_padding_rule(*records).items()})
      self.log(self._evidence(model.metrics))

  @staticmethod
  def _evidence(metrics: dict) -> str:
    """One line: held-out LM accuracy vs the unigram baseline, and NSP vs its baselines. An "ltr"
    run's metrics are lm_* (next-token prediction), a masked-LM run's mlm_*."""
    lm, what = ("lm", "next-token") if "eval_lm_accuracy" in metrics else ("mlm", "masked-LM")
    text = (f"held-out {what} accuracy {metrics.get(f'eval_{lm}_accuracy', float('nan')):.4f} "
            f"vs unigram baseline {metrics.get(f'eval_{lm}_unigram_accuracy', float('nan')):.4f}")
    if "eval_nsp_accuracy" in metrics:
      text += f", NSP accuracy {metrics['eval_nsp_accuracy']:.4f}"
      if "eval_nsp_majority_accuracy" in metrics:
        text += f" vs majority {metrics['eval_nsp_majority_accuracy']:.4f}"
      if "eval_nsp_padding_rule_accuracy" in metrics:
        text += (f" and padding rule {metrics['eval_nsp_padding_rule_accuracy']:.4f} "
                 "(padded -> random next)")
    return text
