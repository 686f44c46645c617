"""The Trainer's partial XLA (fused GELUs, compiled loss sums) trains the same model as without."""

import keras
import numpy as np
import tensorflow as tf

from bert_keras.training.pretrain import build_optimizer, build_pretrainer
from bert_keras.training.pretraining_input import make_dataset
from bert_keras.training.pretraining_task import PretrainingTask
from bert_keras.training.trainer import Trainer
from bert_keras.configs.training import TrainingConfig
from tests.training.pretraining_records import write_records
from tests.training.pretraining_runs import TINY_MODEL


def _weights_after(config, model_dir, **trainer_kwargs):
  keras.utils.set_random_seed(5)  # same initial weights and dropout masks in both runs
  strategy = tf.distribute.get_strategy()
  with strategy.scope():
    model = build_pretrainer(config)
    optimizer = build_optimizer(config)
  initial = [v.numpy().copy() for v in model.trainable_variables]
  run = config.override(output_dir=model_dir, train_batch_size=8, log_every=100, seed=3)
  trainer = Trainer(strategy, model, optimizer, PretrainingTask(config.model.objective), run,
                    **trainer_kwargs)
  data = lambda ctx, skip: make_dataset(run, run.data.input_files, input_context=ctx,
                                        skip_batches=skip)
  history = trainer.train(data, 2)
  return initial, [v.numpy() for v in model.trainable_variables], history


def test_partial_xla_trains_the_same_model(tmp_path):
  """The exact GELU (the model's default); test_activations.py checks both forms op by op."""
  pattern = write_records(str(tmp_path / "records"), num_files=1, per_file=32)
  config = TrainingConfig.from_flat(
      input_files=pattern, model="bert_tiny",
      model_overrides=dict(TINY_MODEL, num_layers=1, hidden_act="gelu"),
      max_seq_length=32, max_predictions_per_seq=5, train_batch_size=8, num_train_steps=10,
      num_warmup_steps=1, learning_rate=1e-2)
  initial, plain, h_plain = _weights_after(config, str(tmp_path / "plain"),
                                           fused_elementwise=False, jit_loss=False)
  _, fused, h_fused = _weights_after(config, str(tmp_path / "fused"),
                                     fused_elementwise=True, jit_loss=True)
  moved = max(float(np.max(np.abs(a - b))) for a, b in zip(plain, initial))
  diff = max(float(np.max(np.abs(a - b))) for a, b in zip(plain, fused))
  assert moved > 1e-3  # it trained (lr 1e-2, dropout on)
  assert diff < 1e-5, diff  # float rounding only
  np.testing.assert_allclose(h_fused[-1]["loss"], h_plain[-1]["loss"], rtol=1e-5)
  assert h_fused[-1]["mlm_accuracy"] == h_plain[-1]["mlm_accuracy"]
