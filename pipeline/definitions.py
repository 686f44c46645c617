"""Builds the BERT pipeline from a PipelineConfig (bert_keras/configs/pipeline.py).

  corpus_ingestion -> vocabulary -> pretraining_examples -> pretrainer --+
                                          checkpoint_importer ----------+-> fine_tuner_<task>_<base>
      -> evaluator_<task>_<base> (metrics + blessing) -> exporter_<task>_<base> -> pusher_<task>_<base>

One fine-tuner/evaluator/exporter/pusher chain per (task, base encoder); `base` is "pretrained" (our
own encoder) or "imported" (the checkpoint). Blessed models go to <serving_dir>/<base>/<task>/<n>/.
"""

from __future__ import annotations

import re

from bert_keras.orchestration.component import Component
from components.checkpoint_importer.spec import CheckpointImporterSpec
from components.corpus_ingestion.spec import CorpusIngestionSpec
from components.evaluator.spec import EvaluatorSpec
from components.exporter.spec import ExporterSpec
from components.fine_tuner.spec import FineTunerSpec
from components.pretrainer.spec import PretrainerSpec
from components.pretraining_examples.spec import PretrainingExamplesSpec
from components.pusher.spec import PusherSpec
from components.vocabulary.spec import VocabularySpec
from bert_keras.configs.pipeline import PipelineConfig
from bert_keras.orchestration.pipeline import Pipeline
from bert_keras.safety import safe_join


def task_slug(task: str) -> str:
  """'glue/sst2' -> 'glue_sst2': task names as component and directory names."""
  return re.sub(r"[^A-Za-z0-9_]", "_", task)


def build_pipeline(config: PipelineConfig, pipeline_root: str, serving_dir: str = "") -> Pipeline:
  """The components of `config`, artifacts under `pipeline_root`, pushes under `serving_dir`."""
  serving_dir = serving_dir or safe_join(pipeline_root, config.serving_dir, "serving_dir")
  corpus, pretraining = config.corpus, config.pretraining
  components = []
  bases = {}
  needs = {b for t in config.tasks for b in t.bases}

  if "pretrained" in needs or not config.tasks:
    ingestion = Component(CorpusIngestionSpec, "corpus_ingestion", parameters=dict(
        wikipedia_dumps=list(corpus.wikipedia_dumps), bert_text_corpora=list(corpus.bert_text_corpora),
        line_corpora=list(corpus.line_corpora), max_documents=corpus.max_documents,
        num_shards=corpus.num_shards))
    vocabulary = Component(VocabularySpec, "vocabulary",
                           inputs={"corpus": ingestion.outputs["corpus"]},
                           parameters=dict(vocab_size=pretraining.vocab_size,
                                           lower_case=pretraining.lower_case,
                                           max_input_words=pretraining.max_input_words))
    examples = Component(PretrainingExamplesSpec, "pretraining_examples",
                         inputs={"corpus": ingestion.outputs["corpus"],
                                 "vocabulary": vocabulary.outputs["vocabulary"]},
                         parameters={name: getattr(pretraining.data, name)
                                     for name in PretrainingExamplesSpec.PARAMETERS})
    pretrainer = Component(PretrainerSpec, "pretrainer",
                           inputs={"examples": examples.outputs["examples"],
                                   "vocabulary": vocabulary.outputs["vocabulary"]},
                           parameters={"training": dict(pretraining.training)})
    components += [ingestion, vocabulary, examples, pretrainer]
    bases["pretrained"] = pretrainer.outputs["model"]

  if "imported" in needs:
    importer = Component(CheckpointImporterSpec, "checkpoint_importer", parameters=dict(
        checkpoint_dir=config.checkpoint_dir, vocab_file=config.checkpoint_vocab_file))
    components.append(importer)
    bases["imported"] = importer.outputs["model"]

  for task in config.tasks:
    for base in task.bases:
      suffix = f"{task_slug(task.task)}_{base}"
      fine_tuner = Component(FineTunerSpec, f"fine_tuner_{suffix}", inputs={"model": bases[base]},
                             parameters=dict(task=task.task,
                                             task_config=task.config_for(base).to_dict(),
                                             max_train_examples=task.max_train_examples))
      evaluator = Component(EvaluatorSpec, f"evaluator_{suffix}",
                            inputs={"model": fine_tuner.outputs["model"]},
                            parameters=dict(thresholds=dict(task.thresholds)))
      exporter = Component(ExporterSpec, f"exporter_{suffix}",
                           inputs={"model": fine_tuner.outputs["model"]})
      pusher = Component(PusherSpec, f"pusher_{suffix}",
                         inputs={"saved_model": exporter.outputs["saved_model"],
                                 "blessing": evaluator.outputs["blessing"]},
                         parameters=dict(serving_dir=safe_join(serving_dir, base, "base"),
                                         model_name=task_slug(task.task)))
      components += [fine_tuner, evaluator, exporter, pusher]
  return Pipeline(config.name, pipeline_root, components)
