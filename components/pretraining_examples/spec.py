"""Pretraining examples spec: Corpus + Vocabulary in, Examples (TFRecord shards) out."""

from __future__ import annotations

from components.base.component_spec import ComponentSpec, InputSpec, Parameter
from components.base.standard_artifacts import Corpus, Examples, Vocabulary


class PretrainingExamplesSpec(ComponentSpec):
  """Defaults are create_pretraining_data.py's (section 3.1 and appendix A.1): 15% of tokens
  masked, 10% short sequences, dupe_factor copies of the corpus with different masks."""

  INPUTS = {"corpus": InputSpec(Corpus), "vocabulary": InputSpec(Vocabulary)}
  OUTPUTS = {"examples": Examples}
  PARAMETERS = {
      "max_seq_length": Parameter(int, 128),
      "max_predictions_per_seq": Parameter(int, 20),
      "masked_lm_prob": Parameter(float, 0.15),
      "short_seq_prob": Parameter(float, 0.1),
      "dupe_factor": Parameter(int, 10),
      "random_seed": Parameter(int, 12345),
      "num_shards": Parameter(int, 2),
  }
  EXECUTOR = "components.pretraining_examples.executor:PretrainingExamplesExecutor"
  USES_BEAM = True
