"""GPT-1 as a model family of the fine-tuning path (tasks/finetuning.py): what `gpt/<task>` runs of
scripts/run_finetuning.py start from, and what they evaluate and save.

--init_checkpoint is a GPT-1 pretraining run's --output_dir (decoder.keras, bpe.model); without it a
random decoder of --model=gpt_* with --vocab_file=<its bpe.model> is the "without pre-training"
ablation. The run's output directory gets bpe.model beside model.keras (the decoder and classifier,
without the LM output), which scripts/export_model.py exports (`GPTTask.export_run`).
"""

from __future__ import annotations

import os

from bert_keras import keras_classes
from bert_keras.configs.model import GPT_PRESETS
from bert_keras.errors import UserError
from bert_keras.gpt.gpt_pretraining import DECODER_FILE, TOKENIZER_FILE
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_task_model import GPTTaskModel
from bert_keras.tasks.finetuning import LoadedEncoder, ModelFamily, check_sequence_length


class GPTFamily(ModelFamily):
  """GPT-1's decoder and BPE tokenizer (`Task.model_family` of every gpt/<task>)."""

  def resolve(self, run, task_config):
    if run.lower_case is not None:
      raise UserError("--lower_case: a GPT task's casing is its BPE model's; leave it unset")
    if run.init_checkpoint:
      for name in (DECODER_FILE, TOKENIZER_FILE):
        if not os.path.isfile(os.path.join(run.init_checkpoint, name)):
          raise UserError(f"{os.path.join(run.init_checkpoint, name)}: no such file; a GPT task's "
                          "--init_checkpoint is the --output_dir of scripts/run_pretraining.py "
                          "--model=gpt_*")
      return run.init_checkpoint
    if run.model not in GPT_PRESETS or not run.vocab_file:
      raise UserError(f"without --init_checkpoint, a GPT task needs --model (one of "
                      f"{sorted(GPT_PRESETS)}) and --vocab_file (its bpe.model)")
    check_sequence_length(task_config.max_seq_length, GPT_PRESETS[run.model], run.model)
    return None

  def load(self, source, run, task_config):
    bpe = os.path.join(source, TOKENIZER_FILE) if source else run.vocab_file
    tokenizer = GPTTokenizer(model_path=bpe)
    if source:
      decoder = keras_classes.load_model(os.path.join(source, DECODER_FILE))
      check_sequence_length(task_config.max_seq_length, decoder.model_config, source)
      described = {"init": "checkpoint", "format": "gpt", "path": source}
    else:
      decoder = GPTDecoder.from_model_config(GPT_PRESETS[run.model].replace(
          vocab_size=tokenizer.vocab_size))
      described = {"init": "random", "model_config": run.model}
    if tokenizer.vocab_size != decoder.model_config.vocab_size:
      raise UserError(f"{bpe}: {tokenizer.vocab_size} pieces but the decoder has "
                      f"vocab_size={decoder.model_config.vocab_size}")
    return LoadedEncoder(decoder, tokenizer, described, {TOKENIZER_FILE: bpe},
                         {"tokenizer_file": TOKENIZER_FILE, "model_file": "model.keras"})

  def serving_model(self, model):
    """The trained model without its LM output: the same decoder and classifier weights."""
    if not model.with_lm_logits:
      return model
    serving = GPTTaskModel(model.decoder, model.task_type, model.num_outputs,
                           model.classifier_dropout, with_lm_logits=False, name=model.name)
    serving.classifier.set_weights(model.classifier.get_weights())
    return serving
