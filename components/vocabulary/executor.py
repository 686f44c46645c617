"""Vocabulary executor: `bert_keras.data.wordpiece_vocab_pipeline.build_corpus_pipeline` on the corpus."""

from __future__ import annotations

from bert_keras.orchestration.base_executor import BaseExecutor
from bert_keras.beam_runner import local_beam_args


class VocabularyExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from bert_keras.data.wordpiece_vocab_pipeline import VOCAB_NAME, build_corpus_pipeline
    from bert_keras.text.vocab import load_vocab

    corpus, vocabulary = inputs["corpus"], outputs["vocabulary"]
    pattern = corpus.path(corpus.properties.get("file_pattern", "*.txt"))
    beam_args = local_beam_args(self.context.beam_pipeline_args)
    self.log(f"learning a {parameters['vocab_size']}-token WordPiece vocabulary with Beam {beam_args}")
    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
      build_corpus_pipeline(p, pattern, vocabulary.uri, dict(parameters, input_files=corpus.uri))
    tokens = load_vocab(vocabulary.path(VOCAB_NAME))
    vocabulary.metrics["vocab_size"] = len(tokens)
    vocabulary.properties.update(lower_case=parameters["lower_case"], vocab_file=VOCAB_NAME)
    self.log(f"{len(tokens)} tokens, e.g. {tokens[-5:]}")
