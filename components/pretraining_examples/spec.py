"""Pretraining examples spec: Corpus + Vocabulary in, Examples (TFRecord shards) out."""

from __future__ import annotations

import dataclasses

from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Corpus, Examples, Vocabulary

_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "Optional[int]": int}


class PretrainingExamplesSpec(ComponentSpec):
  """MLM + NSP examples as TFRecord shards (Beam).

  The parameters are PretrainingDataConfig's fields (bert_keras/configs/pretraining_data.py), with
  its defaults, but those naming the input and output, which the artifacts give."""

  INPUTS = {"corpus": InputSpec(Corpus), "vocabulary": InputSpec(Vocabulary)}
  OUTPUTS = {"examples": Examples}
  PARAMETERS = {f.name: Parameter(_TYPES[f.type], f.default, doc=f.metadata["help"])
                for f in dataclasses.fields(PretrainingDataConfig)
                if f.name not in PretrainingDataConfig.LOCATION_FIELDS}
  EXECUTOR = "components.pretraining_examples.executor:PretrainingExamplesExecutor"
  USES_BEAM = True
