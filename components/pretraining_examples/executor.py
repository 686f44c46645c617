"""Pretraining examples executor: `bert_keras.data.pretraining_data_pipeline` on the ingested corpus."""

from __future__ import annotations

from components.base.base_executor import BaseExecutor
from components.base.beam_options import local_beam_args


class PretrainingExamplesExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from bert_keras.data import beam_metrics, pretraining_data_pipeline
    from configs.pretraining_data import PretrainingDataConfig
    from bert_keras.data.tfrecord_shards import prepare_staging_dir, publish_shards

    corpus, vocabulary, examples = inputs["corpus"], inputs["vocabulary"], outputs["examples"]
    config = PretrainingDataConfig(
        input_pattern=corpus.path(corpus.properties.get("file_pattern", "*.txt")),
        input_format="bert_text", output_dir=examples.uri,
        vocab_file=vocabulary.path("vocab.txt"),
        lower_case=bool(vocabulary.properties.get("lower_case", True)),
        max_seq_length=parameters["max_seq_length"],
        max_predictions_per_seq=parameters["max_predictions_per_seq"],
        masked_lm_prob=parameters["masked_lm_prob"], short_seq_prob=parameters["short_seq_prob"],
        dupe_factor=parameters["dupe_factor"], seed=parameters["random_seed"],
        num_shards=parameters["num_shards"])
    beam_args = local_beam_args(self.context.beam_pipeline_args)
    self.log(f"creating pretraining examples with Beam {beam_args}")
    prepare_staging_dir(config.output_dir)
    p = beam.Pipeline(options=PipelineOptions(beam_args))
    pretraining_data_pipeline.build_pipeline(p, config)
    result = p.run()
    result.wait_until_finish()
    summary = pretraining_data_pipeline.summarize(config, beam_metrics.query_counters(result),
                                                  beam_metrics.query_first_drops(result))
    pretraining_data_pipeline.warn_undecodable(summary)
    publish_shards(config.output_dir, config, summary)
    if not summary["instances"]:
      from bert_keras.errors import UserError  # pylint: disable=import-outside-toplevel
      note = beam_metrics.undecodable_note(summary["dropped"], summary.get("first_dropped", {}))
      raise UserError(f"no pretraining instance was created from {config.input_pattern} "
                      f"(dropped: {summary['dropped']})" + (f"; {note}" if note else ""))
    examples.metrics.update({k: summary[k] for k in (
        "documents", "instances", "mask_ratio", "random_next_fraction") if k in summary})
    examples.properties.update(
        file_pattern=f"{config.output_prefix}-*{config.shard_suffix}",
        max_seq_length=config.max_seq_length,
        max_predictions_per_seq=config.max_predictions_per_seq,
        masked_lm_prob=config.masked_lm_prob, dropped=summary["dropped"])
    self.log(f"{summary['instances']} instances from {summary['documents']} documents")
