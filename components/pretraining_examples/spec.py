"""Pretraining examples spec: Corpus + Vocabulary in, Examples (TFRecord shards) out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Corpus, Examples, Vocabulary


class PretrainingExamplesSpec(ComponentSpec):
  """MLM + NSP examples as TFRecord shards (Beam).

  Defaults are create_pretraining_data.py's (section 3.1 and appendix A.1): 15% of tokens
  masked, 10% short sequences, dupe_factor copies of the corpus with different masks."""

  INPUTS = {"corpus": InputSpec(Corpus), "vocabulary": InputSpec(Vocabulary)}
  OUTPUTS = {"examples": Examples}
  PARAMETERS = {
      "max_seq_length": Parameter(int, 128, doc="Tokens per example, [CLS] and [SEP] included."),
      "max_predictions_per_seq": Parameter(int, 20, doc="Most masked positions per example."),
      "masked_lm_prob": Parameter(float, 0.15, doc="Share of tokens masked (80/10/10)."),
      "short_seq_prob": Parameter(float, 0.1, doc="Share of examples with a shorter length."),
      "dupe_factor": Parameter(int, 10, doc="Copies of the corpus, each with different masks."),
      "seed": Parameter(int, 12345, doc="Seed of the masks and sentence pairs."),
      "num_shards": Parameter(int, 2, doc="Output TFRecord shards."),
  }
  EXECUTOR = "components.pretraining_examples.executor:PretrainingExamplesExecutor"
  USES_BEAM = True
