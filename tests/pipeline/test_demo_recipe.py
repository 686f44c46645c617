"""The demo's Lee similarity recipe and what it serves (docs/benchmarks.md, "The demo's similarity
answers"): MiniLM fine-tuned for 3 epochs on 64-piece pairs ranks the demo's related sentence pairs
above the unrelated one; the tiny BERT does not, and the Pearson bar keeps it from being served."""

from bert_keras.configs.pipeline import LEE_SERVING_PEARSON, demo_config
from bert_keras.pipeline.demo import not_served
from bert_keras.pipeline.definitions import build_pipeline
from bert_keras.pipeline.run_record import ComponentRecord, RunRecord


def lee_task_configs(tmp_path):
  """{base: the task_config the demo's Lee fine-tuner of that base runs with}."""
  pipeline = build_pipeline(demo_config(), str(tmp_path / "root"), str(tmp_path / "serving"))
  return {c.name.rsplit("_", 1)[1]: c.parameters["task_config"] for c in pipeline.components
          if c.name.startswith("fine_tuner_lee_similarity_")}


def test_minilm_gets_three_epochs_of_64_piece_pairs_at_1e_4(tmp_path):
  imported = lee_task_configs(tmp_path)["imported"]
  assert imported["num_epochs"] == 3.0
  assert imported["max_seq_length"] == 64
  assert imported["learning_rate"] == 1e-4


def test_the_tiny_bert_keeps_its_own_learning_rate(tmp_path):
  pretrained = lee_task_configs(tmp_path)["pretrained"]
  assert pretrained["learning_rate"] == 5e-4 and pretrained["max_seq_length"] == 64


def test_only_a_lee_model_above_the_measured_bar_is_served():
  lee = next(t for t in demo_config().tasks if t.task == "lee_similarity")
  assert lee.thresholds == {"pearson": {"lower_bound": LEE_SERVING_PEARSON}}
  # Measured with this recipe: the tiny BERT 22-32 (wrong order), MiniLM 43-59 (metrics 0-100).
  assert 32 < LEE_SERVING_PEARSON < 43


def test_the_demo_names_each_model_it_does_not_serve_and_why():
  def evaluator(name, blessed, failed=()):
    return ComponentRecord(name=name, spec="Evaluator", status="succeeded",
                           properties={"blessing/blessed": blessed,
                                       "blessing/failed_checks": list(failed)})

  record = RunRecord(pipeline="bert_demo", run_id="1", pipeline_root="/tmp", started=0.0,
                     components=[
                         ComponentRecord(name="pretrainer", spec="Pretrainer", status="succeeded"),
                         evaluator("evaluator_lee_similarity_pretrained", False,
                                   ["pearson=0.2568 >= 0.4"]),
                         evaluator("evaluator_lee_similarity_imported", True)])
  assert not_served(record) == [
      "not served: lee_similarity_pretrained (not blessed: failed pearson=0.2568 >= 0.4)"]
