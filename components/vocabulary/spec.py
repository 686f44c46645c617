"""Vocabulary spec: a Corpus in, a Vocabulary (`vocab.txt`) out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Corpus, Vocabulary


class VocabularySpec(ComponentSpec):
  """WordPiece vocabulary learned from the corpus (the paper uses a 30k one, section 3)."""

  INPUTS = {"corpus": InputSpec(Corpus)}
  OUTPUTS = {"vocabulary": Vocabulary}
  PARAMETERS = {
      "vocab_size": Parameter(int, 8000, doc="Target number of tokens in vocab.txt."),
      "lower_case": Parameter(bool, True, doc="Lowercase the text first (an uncased vocabulary)."),
      "num_unused": Parameter(int, 99, doc="[unused*] slots; 99 puts [CLS] at 101 as in bert-base."),
      "min_count": Parameter(int, 1, doc="Lowest count threshold the learner tries."),
      "max_input_words": Parameter(int, 5_000_000,
                                   doc="The learner sees this many most frequent words (its cost)."),
  }
  EXECUTOR = "components.vocabulary.executor:VocabularyExecutor"
  USES_BEAM = True
