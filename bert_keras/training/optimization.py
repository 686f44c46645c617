"""The paper's optimizer: Adam with decoupled weight decay, linear warmup then linear decay.

BERT (appendix A.2): Adam, lr 1e-4, beta1 0.9, beta2 0.999, L2 weight decay 0.01, warmup over the
first 10,000 steps then linear decay; no decay of LayerNorm weights or biases; gradients clipped to
global norm 1.0 as in the released code. LAMB (lamb.py) is for large batches, cosine decay for GPT-1
(section 4.1: 2,000 warmup steps, max lr 2.5e-4, cosine to 0).
"""

from __future__ import annotations

import math

import keras
from keras import ops

from bert_keras.configs.training import OptimizerConfig
from bert_keras.errors import UserError
from bert_keras.training.fused_adamw import FusedAdamW
from bert_keras.training.lamb import Lamb

# Substrings of variable paths that weight decay skips (LayerNorm gamma/beta and every bias).
NO_DECAY_NAMES = ("layer_norm", "LayerNorm", "bias", "beta", "gamma")


@keras.saving.register_keras_serializable(package="bert_keras")
class WarmupDecaySchedule(keras.optimizers.schedules.LearningRateSchedule):
  """Linear warmup to `learning_rate`, then, with r the fraction of the decay still to go:
  linear end + (peak - end) r, polynomial (Keras' PolynomialDecay) end + (peak - end) r^decay_power,
  cosine end + (peak - end) (1 + cos(pi (1 - r))) / 2, or constant."""

  def __init__(self, learning_rate: float, num_train_steps: int, num_warmup_steps: int,
               decay: str = "linear", end_learning_rate: float = 0.0, decay_power: float = 1.0):
    if decay not in ("linear", "polynomial", "cosine", "constant"):
      raise UserError(f"decay={decay!r}; expected 'linear', 'polynomial', 'cosine' or 'constant'")
    if (isinstance(decay_power, bool) or not isinstance(decay_power, (int, float))
        or not 0.0 < decay_power < math.inf):
      raise UserError(f"decay_power={decay_power!r}; expected a finite number > 0")
    if decay != "polynomial" and decay_power != 1.0:
      raise UserError(f"decay_power={decay_power!r} applies only to decay='polynomial' "
                      f"(decay={decay!r}); expected 1.0 or decay='polynomial'")
    if num_train_steps <= 0 or num_warmup_steps < 0:
      raise UserError(f"num_train_steps={num_train_steps} must be > 0 and "
                      f"num_warmup_steps={num_warmup_steps} >= 0")
    self.learning_rate = float(learning_rate)
    self.num_train_steps = int(num_train_steps)
    self.num_warmup_steps = int(num_warmup_steps)
    self.decay = decay
    self.end_learning_rate = float(end_learning_rate)
    self.decay_power = float(decay_power)

  def __call__(self, step):
    step = ops.cast(step, "float32")
    peak = self.learning_rate
    warmup = float(max(self.num_warmup_steps, 1))
    warm_lr = peak * step / warmup
    decay_steps = float(max(self.num_train_steps - self.num_warmup_steps, 1))
    # The fraction still to go, computed directly: 1 - progress loses float32 digits near the end.
    remaining = ops.clip((self.num_train_steps - step) / decay_steps, 0.0, 1.0)
    progress = 1.0 - remaining
    if self.decay in ("linear", "polynomial"):
      power = remaining if self.decay_power == 1.0 else ops.power(remaining, self.decay_power)
      decayed = self.end_learning_rate + (peak - self.end_learning_rate) * power
    elif self.decay == "cosine":
      decayed = self.end_learning_rate + (peak - self.end_learning_rate) * 0.5 * (
          1.0 + ops.cos(math.pi * progress))
    else:
      decayed = ops.convert_to_tensor(peak, "float32")
    if self.num_warmup_steps == 0:
      return decayed
    return ops.where(step < self.num_warmup_steps, warm_lr, decayed)

  def get_config(self):
    return dict(learning_rate=self.learning_rate, num_train_steps=self.num_train_steps,
                num_warmup_steps=self.num_warmup_steps, decay=self.decay,
                end_learning_rate=self.end_learning_rate, decay_power=self.decay_power)


def create_optimizer(config: OptimizerConfig, fused: bool = True) -> keras.optimizers.Optimizer:
  """AdamW (the paper's; `fused`: FusedAdamW, else Keras AdamW, same checkpoints), LAMB or Adam,
  with `config`'s schedule and Keras' global-norm clipping (clip_global_norm 0: none)."""
  schedule = WarmupDecaySchedule(config.learning_rate, config.num_train_steps,
                                 config.num_warmup_steps, config.decay, config.end_learning_rate,
                                 config.decay_power)
  optimizer_type, weight_decay_rate = config.optimizer, config.weight_decay_rate
  common = dict(learning_rate=schedule, beta_1=config.beta_1, beta_2=config.beta_2,
                epsilon=config.epsilon, weight_decay=weight_decay_rate,
                global_clipnorm=config.clip_global_norm or None)
  if optimizer_type == "adamw":
    optimizer = (FusedAdamW if fused else keras.optimizers.AdamW)(**common)
  elif optimizer_type == "lamb":
    optimizer = Lamb(**common)
  elif optimizer_type == "adam":
    common.pop("weight_decay")
    optimizer = keras.optimizers.Adam(**common)
  else:
    raise UserError(f"optimizer={optimizer_type!r}; expected 'adamw', 'lamb' or 'adam'")
  if (weight_decay_rate and optimizer_type != "adam") or optimizer_type == "lamb":
    # For LAMB also the exclusion from the trust ratio, so needed even without decay.
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_NAMES))
  return optimizer
