"""The demo's Lee similarity recipe trains the tiny BERT long enough to order pairs sensibly: after
one epoch its dev Pearson was 0.26 and the served model ranked an unrelated pair above a paraphrase;
three epochs reach about 0.45."""

from bert_keras.configs.pipeline import demo_config


def test_demo_fine_tunes_lee_similarity_for_the_full_epochs():
  config = demo_config()
  lee = next(t for t in config.tasks if t.task == "lee_similarity")
  polarity = next(t for t in config.tasks if t.task == "polarity")
  assert lee.task_config["num_epochs"] == polarity.task_config["num_epochs"] == 3.0
  assert lee.base_task_config["imported"]["num_epochs"] == 1.0
