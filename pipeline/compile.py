"""Compiles a pipeline definition to a Kubeflow Pipelines v2 spec (YAML) for KFP or Vertex AI.

  python -m pipeline.compile --pipeline=demo --image=IMAGE --pipeline_root=gs://BUCKET/root \\
      --serving_dir=/gcs/BUCKET/serving --output_file=pipeline.yaml \\
      [--dataflow_project=P --dataflow_region=R --dataflow_temp_location=gs://BUCKET/tmp] \\
      [--beam_pipeline_args="..."] [--distribution_strategy=default] [--nocaching] \\
      [--no_cache_components=corpus_ingestion]

--pipeline is a preset (demo, smoke) or `package.module:function`, a function without arguments
returning a PipelineConfig (bert_keras/configs/pipeline.py) or a Pipeline; --config_file a
PipelineConfig file (JSON or YAML), used instead of --pipeline. The Beam options are the pipeline
parameter `beam_pipeline_args` of every Beam step; the --dataflow_* flags make them Dataflow's.
The demo's embedded data paths are resolved where this runs: compile inside the image
(`docker run IMAGE python -m pipeline.compile ...`) so that they are the image's; run
elsewhere, a spec that names this host's files is still written, with a one-line warning.
"""

import importlib
import os
import re
import sys

from absl import app, flags

from bert_keras.errors import UserError, parse_flags, run_main, split_args
from bert_keras.configs.pipeline import PipelineConfig
from configs.demo import DEMO_PRETRAIN_STEPS, demo_config, smoke_config
from bert_keras.configs.training import FINETUNE_DISTRIBUTIONS

flags.DEFINE_string("pipeline", "demo", "demo, smoke, or package.module:function.")
flags.DEFINE_string("config_file", None, "Compile this PipelineConfig file, JSON or YAML (e.g. "
                    "a demo run's pipeline_config.json), instead of --pipeline.")
flags.DEFINE_string("image", None, "The component image (Dockerfile), best by digest.")
flags.DEFINE_string("pipeline_root", "", "Where KFP writes artifacts (gs://...); empty: the "
                    "cluster's default.")
flags.DEFINE_string("serving_dir", None, "Where the pusher writes blessed models: a path the "
                    "steps mount (on Vertex AI Pipelines /gcs/BUCKET/...).")
flags.DEFINE_string("output_file", None, "The spec file to write (.yaml).")
flags.DEFINE_string("beam_pipeline_args", "", "Options of the Beam steps, one string.")
flags.DEFINE_string("dataflow_project", "", "Run the Beam steps on Dataflow in this project.")
flags.DEFINE_string("dataflow_region", "", "Dataflow's region.")
flags.DEFINE_string("dataflow_temp_location", "", "Dataflow's temp location (gs://...).")
flags.DEFINE_string("setup_file", "/app/setup.py", "The project's setup.py inside the image "
                    "(Dataflow installs the project on its workers from it).")
flags.DEFINE_enum("distribution_strategy", "default", list(FINETUNE_DISTRIBUTIONS),
                  "tf.distribute strategy of the trainers.")
flags.DEFINE_bool("caching", True, "Let KFP reuse earlier executions of unchanged steps.")
flags.DEFINE_list("no_cache_components", [], "Components that always rerun.")
flags.DEFINE_integer("pretrainer_replicas", 1, "Above 1: the pretrainer runs as a Vertex AI custom "
                     "job of this many replicas (multi_worker_mirrored; needs "
                     "google-cloud-pipeline-components).")
flags.DEFINE_string("pretrainer_machine_type", "n1-standard-8", "Machine type of every replica.")
flags.DEFINE_integer("pretrain_steps", DEMO_PRETRAIN_STEPS, "The demo's pretraining steps.")
flags.DEFINE_integer("max_documents", 0, "The demo's Wikipedia articles (0 = all).")
FLAGS = flags.FLAGS

PRESETS = {"demo": lambda: demo_config(pretrain_steps=FLAGS.pretrain_steps,
                                       max_documents=FLAGS.max_documents),
           "smoke": lambda: smoke_config(max_documents=FLAGS.max_documents or 12)}


def dataflow_args(project: str, region: str, temp_location: str, setup_file: str) -> list[str]:
  """The Beam options that run the Beam steps on Dataflow, the project installed on its workers."""
  missing = [name for name, value in (("dataflow_project", project), ("dataflow_region", region),
                                      ("dataflow_temp_location", temp_location)) if not value]
  if missing:
    raise UserError(f"--{', --'.join(missing)} missing: Dataflow needs a project, a region and a "
                    f"temp location")
  return ["--runner=DataflowRunner", f"--project={project}", f"--region={region}",
          f"--temp_location={temp_location}", f"--setup_file={setup_file}"]


def vertex_multi_worker(replicas: int, machine_type: str) -> dict:
  """{"pretrainer": a function making its KFP component a Vertex AI custom job of `replicas`
  identical replicas (the first in worker pool 0, the others in pool 1); Vertex AI sets
  TF_CONFIG."""
  try:
    # pylint: disable=import-outside-toplevel
    from google_cloud_pipeline_components.v1.custom_job import (
        create_custom_training_job_from_component)
  except ImportError:
    raise UserError(f"--pretrainer_replicas={replicas} needs google-cloud-pipeline-components "
                    f"(pip install google-cloud-pipeline-components), which is not "
                    f"installed") from None
  return {"pretrainer": lambda op: create_custom_training_job_from_component(
      op, display_name="pretrainer", replica_count=replicas, machine_type=machine_type)}


def load_pipeline_definition(name: str):
  """A preset's PipelineConfig, or what `package.module:function` returns."""
  if name in PRESETS:
    return PRESETS[name]()
  module, sep, function = name.partition(":")
  if not sep or not module or not function:
    raise UserError(f"--pipeline={name!r}: expected one of {sorted(PRESETS)} or "
                    f"package.module:function")
  try:
    target = getattr(importlib.import_module(module), function)
  except (ImportError, AttributeError) as e:
    raise UserError(f"--pipeline={name!r}: {e}") from None
  return target()


def main(argv):
  del argv
  # pylint: disable=import-outside-toplevel
  from components.cli import step_arguments
  from pipeline.definitions import build_pipeline
  from bert_keras.orchestration.kfp_compiler import IMAGE_ENV, KfpOptions, compile_pipeline, host_paths
  from bert_keras.orchestration.pipeline import Pipeline

  for flag in ("image", "serving_dir", "output_file"):
    if not FLAGS[flag].value:
      raise UserError(f"--{flag} is required")
  if re.match(r"^[a-z][a-z0-9+.-]*://", FLAGS.serving_dir):
    raise UserError(f"--serving_dir={FLAGS.serving_dir}: the pusher writes with file APIs; pass "
                    f"a path the steps mount (on Vertex AI Pipelines gs://B/x is /gcs/B/x)")
  beam_args = split_args(FLAGS.beam_pipeline_args, "beam_pipeline_args")
  if FLAGS.dataflow_project or FLAGS.dataflow_region or FLAGS.dataflow_temp_location:
    beam_args = dataflow_args(FLAGS.dataflow_project, FLAGS.dataflow_region,
                              FLAGS.dataflow_temp_location, FLAGS.setup_file) + beam_args
  definition = (PipelineConfig.from_file(FLAGS.config_file) if FLAGS.config_file
                else load_pipeline_definition(FLAGS.pipeline))
  if isinstance(definition, PipelineConfig):
    definition = build_pipeline(definition, FLAGS.pipeline_root or "kfp", FLAGS.serving_dir)
  if not isinstance(definition, Pipeline):
    raise UserError(f"--pipeline={FLAGS.pipeline}: returned {type(definition).__name__}, expected "
                    f"a PipelineConfig or a Pipeline")
  options = KfpOptions(image=FLAGS.image, cli=step_arguments, pipeline_root=FLAGS.pipeline_root,
                       beam_pipeline_args=tuple(beam_args),
                       distribution_strategy=FLAGS.distribution_strategy,
                       enable_caching=FLAGS.caching,
                       no_cache=frozenset(FLAGS.no_cache_components),
                       multi_worker=(vertex_multi_worker(FLAGS.pretrainer_replicas,
                                                         FLAGS.pretrainer_machine_type)
                                     if FLAGS.pretrainer_replicas > 1 else {}))
  compile_pipeline(definition, options, FLAGS.output_file)
  print(f"wrote {os.path.abspath(FLAGS.output_file)}: pipeline {definition.name}, "
        f"{len(definition.components)} steps, image {FLAGS.image}", flush=True)
  baked = host_paths(definition)
  if baked and not os.environ.get(IMAGE_ENV):
    more = f" and {len(baked) - 1} more" if len(baked) > 1 else ""
    print(f"warning: compiled outside the component image, so this host's paths are baked into "
          f"the spec ({baked[0]}{more}) and every step will look for them in the image; compile "
          f"inside it: docker run IMAGE python -m pipeline.compile ...", file=sys.stderr)


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
