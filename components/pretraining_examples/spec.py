"""Pretraining examples spec: Corpus + Vocabulary in, Examples (TFRecord shards) out."""

from __future__ import annotations

import dataclasses

from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Corpus, Examples, Vocabulary

_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "Optional[int]": int}


class PretrainingExamplesSpec(ComponentSpec):
  """MLM + NSP examples as TFRecord shards (Beam).

  Defaults are create_pretraining_data.py's (section 3.1 and appendix A.1): 15% of tokens masked,
  10% short sequences, dupe_factor copies of the corpus with different masks. The parameters are
  PretrainingDataConfig's fields (bert_keras/configs/pretraining_data.py) with its defaults, but
  those naming the input and output, which the artifacts give."""

  INPUTS = {"corpus": InputSpec(Corpus), "vocabulary": InputSpec(Vocabulary)}
  OUTPUTS = {"examples": Examples}
  PARAMETERS = {f.name: Parameter(_TYPES[f.type], f.default, doc=f.metadata["help"])
                for f in dataclasses.fields(PretrainingDataConfig)
                if f.name not in PretrainingDataConfig.LOCATION_FIELDS}
  EXECUTOR = "components.pretraining_examples.executor:PretrainingExamplesExecutor"
  USES_BEAM = True
