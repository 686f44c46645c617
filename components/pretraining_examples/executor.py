"""Pretraining examples executor: the ingested corpus through the entry point of
scripts/create_pretraining_data.py (`pretraining_data_pipeline.create_pretraining_data`), so the
component and the script check, refuse and publish alike."""

from __future__ import annotations

from bert_keras.orchestration.base_executor import BaseExecutor
from bert_keras.beam_runner import local_beam_args


class PretrainingExamplesExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    from bert_keras.data.pretraining_data_pipeline import create_pretraining_data
    from bert_keras.configs.pretraining_data import PretrainingDataConfig

    corpus, vocabulary, examples = inputs["corpus"], inputs["vocabulary"], outputs["examples"]
    config = PretrainingDataConfig(
        input_files=corpus.path(corpus.properties.get("file_pattern", "*.txt")),
        input_format="bert_text", output_dir=examples.uri,
        vocab_file=vocabulary.path("vocab.txt"),
        lower_case=bool(vocabulary.properties.get("lower_case", True)),
        **parameters)
    beam_args = local_beam_args(self.context.beam_pipeline_args)
    self.log(f"creating pretraining examples with Beam {beam_args}")
    summary = create_pretraining_data(config, beam_args)
    examples.metrics.update({k: summary[k] for k in (
        "documents", "instances", "mask_ratio", "random_next_fraction") if k in summary})
    examples.properties.update(
        file_pattern=f"{config.output_prefix}-*{config.shard_suffix}",
        max_seq_length=config.max_seq_length,
        max_predictions_per_seq=config.max_predictions_per_seq,
        masked_lm_prob=config.masked_lm_prob, dropped=summary["dropped"])
    self.log(f"{summary['instances']} instances from {summary['documents']} documents")
