"""Pretrainer spec: Examples + Vocabulary in, a Model (encoder weights + config + vocab) out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Examples, Model, Vocabulary


class PretrainerSpec(ComponentSpec):
  """Pretrains the encoder on the examples (objective, model and steps from `training`).

  `training` holds TrainingConfig fields (bert_keras/configs/training.py: model, num_train_steps,
  train_batch_size, learning_rate, ...). Input files, sequence length, vocabulary size and special
  token ids come from the input artifacts; the distribution strategy from the runner.
  `heldout_fraction` of the examples is held out to measure masked-LM and NSP accuracy against
  the unigram baseline (see executor.py); 0 trains on everything."""

  INPUTS = {"examples": InputSpec(Examples), "vocabulary": InputSpec(Vocabulary)}
  OUTPUTS = {"model": Model}
  PARAMETERS = {
      "training": Parameter(dict, {},
                            doc="TrainingConfig fields by flag name (bert_keras/configs/training.py)."),
      "heldout_fraction": Parameter(float, 0.05,
                                    doc="Share held out for MLM and NSP accuracy; 0 = none."),
  }
  EXECUTOR = "components.pretrainer.executor:PretrainerExecutor"
  USES_DISTRIBUTION = True
  VERSION = "3"  # 2: eval_metrics.json and the held-out curves; 3: "ltr" metrics named lm_*
