import json

import pytest

from studies.bert_gpt_ablation.study_config import (ABLATIONS, DEFAULT_TASK_VARIANTS,
                                                    AblationVariant, StudyConfig, get_ablation,
                                                    get_study_config)
from bert_keras.configs.model import ConfigError
from bert_keras.configs.tasks import GPTTaskConfig, get_task_config
from bert_keras.configs.training import TrainingConfig
from configs import recipe_path


def test_named_ablations_cover_both_papers():
  assert get_ablation("bert_no_nsp").objective == "mlm"
  ltr = get_ablation("bert_ltr_no_nsp")
  assert (ltr.objective, ltr.attention, ltr.span_bilstm) == ("ltr", "causal", False)
  assert get_ablation("bert_ltr_no_nsp_bilstm").span_bilstm
  assert get_ablation("elmo_ltr_rtl").family == "elmo"
  assert get_ablation("gpt1").lm_coef == 0.5
  assert get_ablation("gpt1_no_aux_lm").lm_coef == 0.0
  assert not get_ablation("gpt1_no_pretraining").pretrained
  sizes = sorted(v.size for v in ABLATIONS.values() if v.family == "gpt")
  assert sizes[0] < 1.0 < sizes[-1]
  with pytest.raises(ConfigError, match="unknown ablation"):
    get_ablation("bert_huge")


def test_variant_validation():
  with pytest.raises(ConfigError, match="needs attention='causal'"):
    AblationVariant("x", "bert", "ltr")
  with pytest.raises(ConfigError, match="family='t5'"):
    AblationVariant("x", "t5", "mlm")


def test_study_config_validation_and_json():
  study = get_study_config("small")
  values = json.loads(study.to_json())
  assert set(values["tasks"]) == set(DEFAULT_TASK_VARIANTS)
  assert "gpt1" in values["variants"]
  with pytest.raises(ConfigError, match="unknown study task"):
    StudyConfig(tasks={"squad": ("bert_base",)}, layer_transfer_task="")
  with pytest.raises(ConfigError, match="pretrain_warmup_steps=20"):
    StudyConfig(pretrain_steps=10, pretrain_warmup_steps=20)
  with pytest.raises(ConfigError, match="layer_transfer_task"):
    StudyConfig(tasks={"span": ("bert_base",)})


def test_gpt_training_configs_follow_the_paper():
  pre = TrainingConfig.from_file(recipe_path("training", "gpt1"))
  o = pre.optimizer
  assert (o.learning_rate, o.num_warmup_steps, o.decay, o.epsilon) == (2.5e-4, 2000, "cosine", 1e-8)
  assert (pre.model.model, pre.data.train_batch_size, pre.data.max_seq_length) == \
      ("gpt1", 64, 512)
  fine = get_task_config("gpt/glue/rte")
  assert isinstance(fine, GPTTaskConfig)
  assert (fine.lm_coef, fine.learning_rate, fine.train_batch_size) == (0.5, 6.25e-5, 32)
  assert (fine.num_epochs, fine.warmup_proportion) == (3.0, 0.002)
  with pytest.raises(ConfigError, match="lm_coef=-1"):
    get_task_config("gpt/polarity", lm_coef=-1)
  with pytest.raises(ConfigError, match="lm_coef"):
    get_task_config("polarity", lm_coef=0.5)  # a BERT task has no auxiliary LM


def test_pretraining_budget_covers_the_claims():
  study = get_study_config("pretraining")
  small = get_study_config("small")
  assert study.pretrain_steps * study.pretrain_batch_size >= 10 * small.pretrain_steps * \
      small.pretrain_batch_size
  span, polarity = study.tasks["span"], study.tasks["polarity"]
  assert {"bert_no_nsp", "bert_ltr_no_nsp", "bert_no_pretraining"} <= set(span)
  assert {"gpt1", "gpt1_no_pretraining", "gpt1_no_aux_lm"} <= set(polarity)
  assert not get_ablation("bert_no_pretraining").pretrained
  gpt_half = get_study_config("pretraining_gpt")
  assert set(gpt_half.tasks) == {"polarity"} and gpt_half.pretrain_steps == study.pretrain_steps
  with pytest.raises(ConfigError, match="span_per_sentence=0"):
    StudyConfig(span_per_sentence=0)


def test_only_variants_keeps_the_budget_and_drops_the_rest():
  # Re-measuring one variant after a fix (studies/bert_gpt_ablation/run_ablation.py --variants): same budget, only
  # that variant's tasks, and no GPT-1 side analyses unless gpt1 itself is kept.
  extra = get_study_config("signal_extra")
  elmo = extra.only_variants(["elmo_ltr_rtl"])
  assert elmo.tasks == {"lee_probe": ("elmo_ltr_rtl",), "polarity_probe": ("elmo_ltr_rtl",),
                        "span": ("elmo_ltr_rtl",)}
  assert elmo.replace(tasks=extra.tasks) == extra
  core = get_study_config("signal")
  no_gpt = core.only_variants(["bert_base", "bert_no_pretraining"])
  assert set(no_gpt.tasks) == {"lee_probe", "polarity_probe", "span"}
  assert (no_gpt.layer_transfer_task, no_gpt.zero_shot_points) == ("", 0)
  with_gpt = core.only_variants(["gpt1"])
  assert (with_gpt.layer_transfer_task, with_gpt.zero_shot_points) == ("polarity", 3)
  with pytest.raises(ConfigError, match=r"\['gpt1_size_half'\] are not run by this study"):
    core.only_variants(["gpt1", "gpt1_size_half"])
  with pytest.raises(ConfigError, match="unknown ablation 'bert_huge'"):
    core.only_variants(["bert_huge"])
