"""The pretrainer's Model artifact names an "ltr" run's metrics lm_* (next-token prediction) and a
masked-LM run's mlm_*: the metrics, the curves, eval_metrics.json and the logged evidence line."""

import json
import os

from bert_keras.orchestration.base_executor import ExecutionContext
from bert_keras.orchestration.standard_artifacts import Examples, Model, Vocabulary
from components.pretrainer.executor import PretrainerExecutor
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL

# The ids pretraining_records writes: [CLS] 101, [SEP] 102, [MASK] 103.
_SPECIAL = {0: "[PAD]", 100: "[UNK]", 101: "[CLS]", 102: "[SEP]", 103: "[MASK]"}


def _inputs(tmp_path):
  examples_dir = tmp_path / "examples"
  write_records(str(examples_dir), num_files=2, per_file=64, seed=3)
  examples = Examples(str(examples_dir))
  examples.properties.update(file_pattern="part-*.tfrecord", max_seq_length=32,
                             max_predictions_per_seq=5)
  vocabulary = Vocabulary(str(tmp_path / "vocabulary"))
  os.makedirs(vocabulary.uri)
  with open(vocabulary.path("vocab.txt"), "w", encoding="utf-8") as f:
    f.write("".join(_SPECIAL.get(i, f"tok{i}") + "\n" for i in range(TINY_MODEL["vocab_size"])))
  return {"examples": examples, "vocabulary": vocabulary}


def test_ltr_pretrainer_reports_lm_metrics(tmp_path):
  model = Model(str(tmp_path / "model"))
  os.makedirs(model.uri)
  logged = []
  executor = PretrainerExecutor(ExecutionContext(component_name="pretrainer",
                                                 tmp_dir=str(tmp_path / "tmp"),
                                                 log_fn=logged.append))
  training = dict(model="bert_tiny", model_overrides=dict(TINY_MODEL, num_layers=1),
                  objective="ltr", train_batch_size=8, num_train_steps=3, num_warmup_steps=1,
                  learning_rate=1e-3, log_every=1, checkpoint_every=3, deterministic=True)
  # 128 records, every 8th held out: 16, two evaluation batches.
  executor.run(_inputs(tmp_path), {"model": model},
               {"training": training, "heldout_fraction": 0.125})

  for name in ("eval_lm_accuracy", "eval_lm_loss", "eval_lm_unigram_accuracy", "train_lm_loss",
               "train_lm_accuracy"):
    assert name in model.metrics, sorted(model.metrics)
  assert 0.0 <= model.metrics["eval_lm_accuracy"] <= 1.0
  assert not [k for k in model.metrics if "mlm_" in k], sorted(model.metrics)
  assert {"train_lm_loss", "eval_lm_accuracy", "eval_lm_unigram_accuracy"} <= set(model.curves)
  assert "train_lm_unigram_accuracy" not in model.curves  # a baseline is a held-out curve only
  assert not [k for k in model.curves if "mlm_" in k], sorted(model.curves)

  with open(model.path("eval_metrics.json"), encoding="utf-8") as f:
    final = json.load(f)["final"]
  assert {"lm_accuracy", "lm_loss", "lm_unigram_accuracy"} <= set(final)
  assert not [k for k in final if k.startswith("mlm_")], final

  (evidence,) = [m for m in logged if "unigram baseline" in m]
  assert (f"held-out next-token accuracy {model.metrics['eval_lm_accuracy']:.4f} vs unigram "
          f"baseline {model.metrics['eval_lm_unigram_accuracy']:.4f}") in evidence
  assert "masked-LM" not in evidence and "NSP" not in evidence


def test_evidence_line_names_the_lm_kind():
  masked = PretrainerExecutor._evidence(  # pylint: disable=protected-access
      {"eval_mlm_accuracy": 0.25, "eval_mlm_unigram_accuracy": 0.125, "eval_nsp_accuracy": 0.5,
       "eval_nsp_majority_accuracy": 0.5})
  assert masked == ("held-out masked-LM accuracy 0.2500 vs unigram baseline 0.1250, "
                    "NSP accuracy 0.5000 vs majority 0.5000")
  next_token = PretrainerExecutor._evidence(  # pylint: disable=protected-access
      {"eval_lm_accuracy": 0.25, "eval_lm_unigram_accuracy": 0.125})
  assert next_token == "held-out next-token accuracy 0.2500 vs unigram baseline 0.1250"


def test_a_misspelt_training_key_names_the_known_ones(tmp_path):
  """The `training` parameter goes through TrainingConfig.from_dict: a typo is a ConfigError (a
  UserError, one error line) naming the known keys, not a TypeError traceback."""
  import pytest
  from bert_keras.configs.model import ConfigError
  model = Model(str(tmp_path / "model"))
  os.makedirs(model.uri)
  executor = PretrainerExecutor(ExecutionContext(component_name="pretrainer",
                                                 tmp_dir=str(tmp_path / "tmp")))
  with pytest.raises(ConfigError, match=r"num_train_step: unknown key in TrainingConfig"):
    executor.run(_inputs(tmp_path), {"model": model},
                 {"training": {"num_train_step": 2}, "heldout_fraction": 0.0})
  assert not os.listdir(model.uri)
