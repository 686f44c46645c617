r"""Pretrains BERT (or runs an ablation) from TFRecords: flags -> TrainingConfig -> run_pretraining.

Quickstart: records from a text corpus (one sentence per line, a blank line between documents) at
the tiny_debug recipe's length (64 tokens, 10 predictions), then a 100-step run of bert_tiny:

  python scripts/create_pretraining_data.py --input_files=corpus.txt --input_format=bert_text \
      --output_dir=data/len64 --max_seq_length=64 --max_predictions_per_seq=10
  python scripts/run_pretraining.py --config_file=configs/training/tiny_debug.json \
      --input_files='data/len64/pretraining-*.tfrecord' --output_dir=out/pretrain

The records' length must match --max_seq_length / --max_predictions_per_seq (the paper's phase 1:
create_pretraining_data's defaults 128 / 20; phase 2: 512 / 80), and the pattern names the
pretraining-*.tfrecord shards, not summary.json beside them. More options:

  python scripts/run_pretraining.py --config_file=configs/training/bert_base_phase1.json \
      --input_files='data/len128/pretraining-*.tfrecord' --output_dir=out/phase1 \
      [--distribution_strategy=mirrored] [--mixed_precision=mixed_bfloat16] [--gradient_accumulation_steps=4] \
      [--objective=mlm|ltr] [--dynamic_masking] \
      [--decay=polynomial --decay_power=3]  # lr = end + (peak - end) * (1 - progress) ** 3
  Phase 2 (paper: last 10% of the steps at length 512):
  python scripts/run_pretraining.py --config_file=configs/training/bert_base_phase2.json \
      --input_files='data/len512/pretraining-*.tfrecord' --init_checkpoint=out/phase1 \
      --output_dir=out/phase2

GPT-1 (a GPT preset, gpt_nano ... gpt1) trains its LM objective L1 on plain text: the embedded
--corpora and/or --input_files (one document per line), BPE-encoded with --bpe_model
(scripts/train_bpe.py); configs/training/gpt1.json holds the paper's schedule (section 4.1):

  python scripts/run_pretraining.py --config_file=configs/training/gpt1.json --model=gpt_tiny \
      --bpe_model=out/bpe/bpe.model --corpora=wikipedia,lee_background --output_dir=out/gpt

Every TrainingConfig field is a flag of its name (model_overrides as JSON; TrainingConfig nests
them by section: data, model, optimizer, runtime, outputs); --help gives each one's meaning and
default (bert_keras/configs/training.py documents them). Flags given on the command line override
the --config_file values. Re-running the same command resumes from the last
checkpoint in --output_dir.
"""

from __future__ import annotations

import dataclasses
import json

from absl import app, flags, logging

from bert_keras.errors import UserError, parse_flags, run_main
from bert_keras.input_checks import check_reachable, split_patterns
from bert_keras.json_io import parse_json
from bert_keras.configs.model import GPT_PRESETS
from bert_keras.configs.training import TrainingConfig

FLAGS = flags.FLAGS
flags.DEFINE_string("config_file", None, "start from this TrainingConfig file, JSON or YAML (a "
                    "recipe of configs/training/, or a run's training_config.json); other flags "
                    "override its values")

for _field in (f for s in dataclasses.fields(TrainingConfig) for f in dataclasses.fields(s.default)):
  _name = _field.name
  # The field's own documentation (bert_keras/configs/training.py); a --config_file replaces the
  # default, so the flags themselves default to None ("not given").
  _default = _field.default_factory() if _field.default is dataclasses.MISSING else _field.default
  _shown = ",".join(map(str, _default)) if isinstance(_default, tuple) else json.dumps(_default)
  _help = f"{_field.metadata['help']} (default {_shown})"
  if _field.type in ("str", str):
    flags.DEFINE_string(_name, None, _help)
  elif _field.type in ("bool", bool):
    flags.DEFINE_boolean(_name, None, _help)
  elif _field.type in ("int", int):
    flags.DEFINE_integer(_name, None, _help)
  elif _field.type in ("float", float):
    flags.DEFINE_float(_name, None, _help)
  elif _name == "special_token_ids":
    flags.DEFINE_list(_name, None, _help + "; comma-separated ids")
  else:
    flags.DEFINE_string(_name, None, _help)


def config_from_flags() -> TrainingConfig:
  config = TrainingConfig.from_file(FLAGS.config_file) if FLAGS.config_file else None
  changes = {}
  for name in TrainingConfig.sections():
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
  config = TrainingConfig.from_flat(changes) if config is None else config.override(**changes)
  if config.model.model in GPT_PRESETS and FLAGS.objective not in (None, "ltr"):
    raise UserError(f"--objective={FLAGS.objective}: a GPT-1 preset (--model={config.model.model}) "
                    "trains its left-to-right LM objective only; expected --objective=ltr or none")
  return config


def main(argv):
  del argv
  logging.set_verbosity(logging.INFO)
  config = config_from_flags()  # a bad flag or config file fails here, before TensorFlow loads
  for name in ("input_files", "eval_input_files", "init_checkpoint", "output_dir"):
    for path in split_patterns(str(config.to_flat()[name] or "")):
      check_reachable(path, name)  # gs:// without network: one line, not minutes of retries
  # pylint: disable=import-outside-toplevel
  # A model family is a value of --model: GPT-1's presets train its LM objective on text.
  if config.model.model in GPT_PRESETS:
    from bert_keras.gpt.gpt_pretraining import run_gpt_pretraining as run
  else:
    from bert_keras.training.pretrain import run_pretraining as run
  result = run(config)
  logging.info("final: %s", json.dumps(result, sort_keys=True))


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
