"""The main job (`make demo`): the whole BERT pipeline on the embedded real data, then questions.

  python -m pipeline.demo --output_dir demo_out [--force] [--force_components=pretrainer]
      [--beam_pipeline_args="--direct_num_workers=2"] [--distribution_strategy=default]
      [--pretrain_steps=400] [--finetune_epochs=3] [--max_documents=0]
  python -m pipeline.demo --output_dir demo_out2 --config_file=demo_out/pipeline_config.json

The real Wikipedia dump -> learned WordPiece vocabulary -> pretraining examples (Beam) -> a tiny BERT
pretrained with MLM + NSP -> fine-tuned on polarity and Lee similarity, from that model and from
the real all-MiniLM-L6-v2 checkpoint -> evaluated and blessed -> exported -> pushed to
<output_dir>/serving -> loaded back in a fresh process and asked a few questions.
A second run with nothing changed completes from the cache. The resolved PipelineConfig is written
to <output_dir>/pipeline_config.json; --config_file runs such a file (JSON or YAML) instead of the
demo's recipe, whose three settings (--pretrain_steps, --finetune_epochs, --max_documents) it then
refuses.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

from absl import app, flags

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError, parse_flags, run_main, split_args
from configs.demo import DEMO_PRETRAIN_STEPS, demo_config
from bert_keras.configs.training import FINETUNE_DISTRIBUTIONS

flags.DEFINE_string("output_dir", None, "Where artifacts, run reports and the serving dir go.")
flags.DEFINE_bool("force", False, "Rerun every component, ignoring the cache.")
flags.DEFINE_list("force_components", [], "Rerun these components (and what depends on them).")
flags.DEFINE_string("beam_pipeline_args", "", "Options for the Beam components, one string.")
flags.DEFINE_enum("distribution_strategy", "default", list(FINETUNE_DISTRIBUTIONS),
                  "tf.distribute strategy of the trainers (those fine-tuning supports).")
flags.DEFINE_integer("pretrain_steps", DEMO_PRETRAIN_STEPS,
                     "Pretraining steps of the tiny BERT (the default: held-out masked LM "
                     "well above the unigram baseline, in about 1-3 min on 2 CPU cores).")
flags.DEFINE_float("finetune_epochs", 3.0,
                   "Fine-tuning epochs (MiniLM polarity gets twice as many).")
flags.DEFINE_integer("max_documents", 0, "Keep this many Wikipedia articles (0 = all 106).")
flags.DEFINE_string("config_file", None, "Run this PipelineConfig file, JSON or YAML (e.g. a "
                    "run's pipeline_config.json), instead of the demo's recipe.")
flags.DEFINE_bool("query", True, "Load the pushed models in a fresh process and ask questions.")
FLAGS = flags.FLAGS


def query_in_fresh_process(serving_dir: str, answers_file: str) -> None:
  cmd = [sys.executable, "-m", "pipeline.query_served_models", f"--serving_dir={serving_dir}",
         f"--output_file={answers_file}"]
  print(f"\n$ {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
  done = subprocess.run(cmd, check=False)
  if done.returncode:
    raise UserError(f"querying the served models failed (exit status {done.returncode})")


def not_served(record) -> list[str]:
  """One line per evaluated model that was not blessed, so not pushed and not asked, with why."""
  lines = []
  for c in record.components:
    if c.properties.get("blessing/blessed") is False:
      failed = "; ".join(c.properties.get("blessing/failed_checks", [])) or "no reason recorded"
      name = c.name.removeprefix("evaluator_")
      lines.append(f"not served: {name} (not blessed: failed {failed})")
  return lines


def config_from_flags():
  """The demo's recipe with the flags' sizes, or the --config_file's PipelineConfig."""
  from bert_keras.configs.pipeline import PipelineConfig  # pylint: disable=import-outside-toplevel

  recipe = ("pretrain_steps", "finetune_epochs", "max_documents")
  if not FLAGS.config_file:
    return demo_config(**{name: FLAGS[name].value for name in recipe})
  given = [f"--{name}" for name in recipe if FLAGS[name].present]
  if given:
    raise UserError(f"{', '.join(given)}: settings of the demo's recipe; --config_file="
                    f"{FLAGS.config_file} gives the whole pipeline config")
  return PipelineConfig.from_file(FLAGS.config_file)


def main(argv):
  del argv
  # pylint: disable=import-outside-toplevel
  from pipeline.definitions import build_pipeline
  from bert_keras.orchestration.local_runner import LocalRunner
  from pipeline.query_served_models import find_models

  if not FLAGS.output_dir:
    raise UserError("--output_dir is required")
  beam_args = split_args(FLAGS.beam_pipeline_args, "beam_pipeline_args")
  start = time.time()
  output_dir = os.path.abspath(FLAGS.output_dir)
  config = config_from_flags()
  serving_dir = os.path.join(output_dir, "serving")
  pipeline = build_pipeline(config, os.path.join(output_dir, "pipeline"), serving_dir)
  runner = LocalRunner(beam_pipeline_args=beam_args,
                       distribution_strategy=FLAGS.distribution_strategy,
                       force=True if FLAGS.force else FLAGS.force_components)
  runner.check(pipeline)  # options no component can run with: refused before anything is written
  os.makedirs(output_dir, exist_ok=True)
  write_text(os.path.join(output_dir, "pipeline_config.json"), config.to_json() + "\n")

  print(f"pipeline {pipeline.name}: {len(pipeline.components)} components, artifacts under "
        f"{pipeline.pipeline_root}", flush=True)
  record = runner.run(pipeline)
  answers_file = os.path.join(output_dir, "answers.txt")
  all_cached = all(c.status == "cached" for c in record.components)
  if FLAGS.query and all_cached and os.path.exists(answers_file):
    # Nothing changed, so the served models are the ones that gave these answers.
    with open(answers_file, encoding="utf-8") as f:
      print(f"\nall components cached; the served models' answers from {answers_file}:\n"
            + f.read(), flush=True)
  elif FLAGS.query and not find_models(serving_dir):
    print("\nno model was blessed, so none was pushed and there is nobody to ask (see the "
          "evaluators' failed checks in the table above)", flush=True)
  elif FLAGS.query:
    query_in_fresh_process(serving_dir, answers_file)
  if FLAGS.query and not_served(record):
    print("\n" + "\n".join(not_served(record)), flush=True)
  print(f"\ndemo finished in {time.time() - start:.0f}s; report: "
        f"{os.path.join(record.report_dir, 'report.html')}", flush=True)


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
