"""The pipeline's recipes: the main job (`make demo`) and the end-to-end tests' slice of it.

Each is a `PipelineConfig` (bert_keras/configs/pipeline.py); `pipeline/definitions.py` turns one into
components. Paths of the embedded real data are resolved when a recipe is built (bert_keras.resources).
"""

from __future__ import annotations

from bert_keras.configs.pipeline import CorpusConfig, FineTuneConfig, PipelineConfig, PretrainingConfig
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.configs.training import TrainingOverrides

# The demo's pretraining steps: demo_config's default and pipeline/demo.py's --pretrain_steps.
# What the demo shows of the tiny BERT is held-out masked-LM accuracy above the unigram baseline
# (its fine-tuned models fail their bars and are not served at any budget measured). On the
# recorded curve (studies/pretraining_evidence/runs/2026-11-27_initializer_range/init0.05_seed42)
# held-out masked LM is 0.119 at step 400 against the unigram's 0.052, and the 1,600 steps after
# it add 0.017; NSP leaves the majority only after step 1200. 400 steps: a fifth of the time.
DEMO_PRETRAIN_STEPS = 400


# The dev Pearson a Lee similarity model needs to be served by the demo, on the 0-100 scale of every
# task metric (bert_keras/tasks/metrics.py): with the demo's recipe the tiny BERT reached 22-32 and
# MiniLM 43-59 (docs/benchmarks.md: Pearson 0.22-0.32 and 0.43-0.59). Not sufficient on its own
# (Pearson is measured on documents, the demo asks about sentences): the query step prints a verdict
# on the order of each served model's answers.
LEE_SERVING_PEARSON = 35.0


def demo_config(pretrain_steps: int = DEMO_PRETRAIN_STEPS, finetune_epochs: float = 3.0,
                max_documents: int = 0) -> PipelineConfig:
  """The main job (`make demo`), sized to finish in under 10 minutes on 2 CPU cores.

  The real Wikipedia dump -> an 8k learned WordPiece vocabulary -> pretraining examples ->
  bert_tiny pretrained with MLM + NSP for 400 steps -> the polarity and Lee similarity
  tasks fine-tuned from it and from the real all-MiniLM-L6-v2 checkpoint (6 layers, H=384).
  """
  from bert_keras import resources  # pylint: disable=import-outside-toplevel

  fine_tune = dict(num_epochs=finetune_epochs, warmup_proportion=0.1)
  return PipelineConfig(
      name="bert_demo",
      corpus=CorpusConfig(wikipedia_dumps=(resources.wikipedia_dump_path(),),
                          max_documents=max_documents),
      pretraining=PretrainingConfig(
          vocab_size=8000, max_input_words=12000,
          data=PretrainingDataConfig(
              max_seq_length=128, max_predictions_per_seq=20, num_shards=2,
              # 5 passes over the corpus (~27k examples, ~15 s): with 2, the ~10k training pairs
              # were seen 4-5 times and NSP memorised them; with 5 each pair is seen 2-3 times and
              # held-out NSP rises above the majority from step ~1400-1800
              # (studies/pretraining_evidence/README.md).
              dupe_factor=5,
              # No short-target passes: they make short, mostly random-next examples, and "padded
              # -> random next" would pass for NSP learning (studies/pretraining_evidence/README.md).
              short_seq_prob=0.0),
          training=TrainingOverrides(
              model="bert_tiny", num_train_steps=pretrain_steps,
              # Masked LM underfits in a few hundred steps: no dropout (fine-tuning sets its own
              # hidden dropout), and the steps are cheaper (studies/pretraining_evidence).
              # Initial weights of std 0.05 rather than BERT's 0.02: at H=128 the attention starts
              # less uniform, and on three paired seeds held-out NSP ends 0.013-0.048 higher
              # (0.611-0.639) and masked LM 0.002-0.005 higher.
              model_overrides=dict(dropout_rate=0.0, attention_dropout_rate=0.0,
                                   initializer_range=0.05),
              num_warmup_steps=max(1, pretrain_steps // 10), train_batch_size=32,
              # 2e-3 rather than 1e-3: masked LM learns faster, and NSP (which starts once the
              # token features exist) ends higher (studies/pretraining_evidence).
              learning_rate=2e-3, checkpoint_every=max(pretrain_steps, 1),
              log_every=max(1, min(25, pretrain_steps // 10)),
              # Held-out masked-LM / NSP accuracy (5% of the examples, see
              # components/pretrainer/executor.py) five times along the run.
              eval_every=max(1, pretrain_steps // 5))),
      checkpoint_dir=resources.minilm_dir(),
      tasks=(
          # Sentence polarity: 200 sentences, every 5th held out; chance is 50% accuracy.
          # Small models take larger steps (the tiny BERT from 5e-4, MiniLM from 1e-4).
          FineTuneConfig(task="polarity",
                         task_config=dict(max_seq_length=64, train_batch_size=16,
                                          learning_rate=5e-4, **fine_tune),
                         # MiniLM was tuned for sentence embeddings, not its [CLS] pooler: more steps.
                         base_task_config={"imported": dict(learning_rate=1e-4,
                                                            num_epochs=2 * finetune_epochs)},
                         thresholds={"accuracy": {"lower_bound": 55.0}}),  # percent
          # Lee document similarity: rated pairs of news documents; correlation with humans.
          # 64 pieces keep the first ~30 of each document, its lead sentence: closer to the short
          # sentences the demo asks about than 128, and under half the cost of an epoch, so MiniLM
          # gets 3 epochs for about 1.4x the cost of the 1 it had. With 1 epoch at 128 its Pearson
          # was 26-37 and the served model scored the unrelated pair level with the
          # paraphrase (within 0.003); with this recipe 43-59 and both related pairs above
          # it on every seed (docs/benchmarks.md, "The demo's similarity answers").
          # The tiny BERT, pretrained on 104 articles, stays at 22-32 and ranks the unrelated
          # pair above a related one (even after 10 epochs at 1e-3, which reach 46-58 on
          # the documents), so the threshold keeps it from being served; its metrics stay in the
          # run report.
          FineTuneConfig(task="lee_similarity",
                         task_config=dict(max_seq_length=64, train_batch_size=16,
                                          learning_rate=5e-4, **fine_tune),
                         base_task_config={"imported": dict(learning_rate=1e-4)},
                         max_train_examples=600,
                         thresholds={"pearson": {"lower_bound": LEE_SERVING_PEARSON}}),
      ))


def smoke_config(max_documents: int = 12) -> PipelineConfig:
  """The end-to-end test's slice: a dozen Wikipedia articles, a few steps, tiny fine-tuning."""
  config = demo_config(pretrain_steps=4, finetune_epochs=1.0, max_documents=max_documents)
  tiny = dict(max_seq_length=32, train_batch_size=8)
  pretraining = config.pretraining
  return config.replace(
      name="bert_smoke",
      pretraining=pretraining.replace(
          vocab_size=600, max_input_words=2000,
          data=pretraining.data.replace(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1),
          training=TrainingOverrides(pretraining.training, num_train_steps=4, num_warmup_steps=1,
                                     train_batch_size=8, checkpoint_every=4, log_every=2,
                                     eval_every=2)),
      tasks=tuple(t.replace(task_config=t.task_config.replace(**tiny), max_train_examples=32,
                            bases=("pretrained",), base_task_config={}, thresholds={})
                  for t in config.tasks),
  )
