"""Pretrainer executor: `bert_keras.training.pretrain.run_pretraining` on the Examples artifact.

Checkpoints stay in the execution's scratch directory; the Model artifact keeps what consumers
need: `encoder/` (encoder.keras, model_config.json, vocab.txt; see checkpoint_importer/executor.py),
`history.jsonl` (plotted as training curves) and the resolved `training_config.json`.
"""

from __future__ import annotations

import json
import os
import shutil

from components.base.base_executor import BaseExecutor
from components.checkpoint_importer.executor import ENCODER_DIR, record_encoder

# Columns of the trainer's history that are not learning curves.
_NOT_CURVES = ("step", "split", "steps_per_sec", "sequences_per_sec", "learning_rate")


def curves_from_history(rows) -> dict:
  """{"train_loss": [[step, value], ...], ...} from history.jsonl rows."""
  curves = {}
  for row in rows:
    for key, value in row.items():
      if key not in _NOT_CURVES and isinstance(value, (int, float)):
        curves.setdefault(f"{row.get('split', 'train')}_{key}", []).append([row["step"], value])
  return curves


class PretrainerExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    from bert_keras.text.vocab import load_vocab
    from bert_keras.training.pretrain import run_pretraining
    from configs.training import TrainingConfig

    examples, vocabulary, model = inputs["examples"], inputs["vocabulary"], outputs["model"]
    vocab_path = vocabulary.path("vocab.txt")
    tokens = load_vocab(vocab_path)
    index = {t: i for i, t in enumerate(tokens)}
    training = dict(parameters["training"])
    overrides = dict(training.pop("model_overrides", {}), vocab_size=len(tokens))
    model_dir = os.path.join(self.context.tmp_dir, "training")
    config = TrainingConfig(**dict(
        training,
        input_files=examples.path(examples.properties["file_pattern"]),
        max_seq_length=int(examples.properties["max_seq_length"]),
        max_predictions_per_seq=int(examples.properties["max_predictions_per_seq"]),
        vocab_size=len(tokens), mask_token_id=index["[MASK]"],
        special_token_ids=tuple(index[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
                                if t in index),
        model_overrides=overrides, distribution=self.context.distribution_strategy,
        model_dir=model_dir))
    self.log(f"pretraining {config.model_preset} ({config.objective}) for "
             f"{config.num_train_steps} steps, batch {config.train_batch_size}, "
             f"vocab {len(tokens)}, strategy {config.distribution}")
    last = run_pretraining(config)

    encoder_dir = model.path(ENCODER_DIR)
    shutil.copytree(os.path.join(model_dir, "export"), encoder_dir)
    shutil.copyfile(vocab_path, os.path.join(encoder_dir, "vocab.txt"))
    for name in ("history.jsonl", "training_config.json"):
      shutil.copyfile(os.path.join(model_dir, name), model.path(name))
    with open(model.path("history.jsonl"), encoding="utf-8") as f:
      model.curves.update(curves_from_history(json.loads(line) for line in f if line.strip()))
    record_encoder(model, config.model_config().to_dict(), "pretrainer")
    model.properties["lower_case"] = bool(vocabulary.properties.get("lower_case", True))
    for split, row in last.items():
      model.metrics.update({f"{split}_{k}": float(v) for k, v in row.items()
                            if k not in _NOT_CURVES and isinstance(v, (int, float))})
