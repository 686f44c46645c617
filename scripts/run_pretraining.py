"""Pretrains BERT (or runs an ablation) from TFRecords: flags -> TrainingConfig -> run_pretraining.

  python scripts/run_pretraining.py --preset=tiny_debug --input_files='data/train-*.tfrecord' \
      --model_dir=out/pretrain [--distribution=mirrored] [--precision=mixed_bfloat16] \
      [--gradient_accumulation_steps=4] [--objective=mlm|ltr] [--dynamic_masking] \
      [--decay=polynomial --decay_power=3]  # lr = end + (peak - end) * (1 - progress) ** 3
  Phase 2 (paper: last 10% of the steps at length 512):
      ... --phase=2 --max_seq_length=512 --max_predictions_per_seq=80 \
          --init_checkpoint=out/phase1 --model_dir=out/phase2
Every TrainingConfig field is a flag of the same name (model_overrides as JSON). Flags given on the
command line override the --preset (or --config_json) values. Re-running the same command resumes
from the last checkpoint in --model_dir.
"""

from __future__ import annotations

import dataclasses
import json

from absl import app, flags, logging

from bert_keras.errors import UserError, parse_flags, run_main
from bert_keras.json_io import parse_json
from configs.training import TRAINING_PRESETS, TrainingConfig, get_training_config

FLAGS = flags.FLAGS
flags.DEFINE_string("preset", None, f"a training preset: {sorted(TRAINING_PRESETS)}")
flags.DEFINE_string("config_json", None, "a TrainingConfig JSON file (e.g. a training_config.json)")

_FIELDS = {f.name: f for f in dataclasses.fields(TrainingConfig)}
for _name, _field in _FIELDS.items():
  _help = f"TrainingConfig.{_name}"
  if _field.type in ("str", str):
    flags.DEFINE_string(_name, None, _help)
  elif _field.type in ("bool", bool):
    flags.DEFINE_boolean(_name, None, _help)
  elif _field.type in ("int", int):
    flags.DEFINE_integer(_name, None, _help)
  elif _field.type in ("float", float):
    flags.DEFINE_float(_name, None, _help)
  elif _name == "special_token_ids":
    flags.DEFINE_list(_name, None, _help + " (comma-separated ids)")
  else:
    flags.DEFINE_string(_name, None, _help + " (JSON object)")


def config_from_flags() -> TrainingConfig:
  if FLAGS.preset and FLAGS.config_json:
    raise UserError("give --preset or --config_json, not both")
  if FLAGS.config_json:
    config = TrainingConfig.from_json_file(FLAGS.config_json)
  elif FLAGS.preset:
    config = get_training_config(FLAGS.preset)
  else:
    config = None
  changes = {}
  for name in _FIELDS:
    value = FLAGS[name].value
    if value is None:
      continue
    if name == "special_token_ids":
      try:
        value = [int(v) for v in value]
      except ValueError:
        raise UserError(f"--special_token_ids={','.join(value)}: expected comma-separated integer "
                        "token ids") from None
    elif name == "model_overrides":
      value = parse_json(value, "--model_overrides", expected=dict)
    changes[name] = value
  if config is None:
    return TrainingConfig.from_dict(changes)
  return config.replace(**changes)


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  config = config_from_flags()  # a bad flag or config file fails here, before TensorFlow loads
  from bert_keras.training.pretrain import run_pretraining  # pylint: disable=import-outside-toplevel
  result = run_pretraining(config)
  logging.info("final: %s", json.dumps(result, sort_keys=True))


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
