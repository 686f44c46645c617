"""The small-scale ablation study: BERT section 5.1 and GPT-1 section 5 under one fixed budget.

For each seed: pretrain every model the configured variants need (same corpus, vocabulary, steps,
batch and peak learning rate), fine-tune each variant on each task, and record the dev metric.
GPT-1's two analyses ride along: the first k of L pretrained layers transferred (k = 0..L), and
zero-shot sentiment scored on the LM at points along its pretraining. Results go to
results.jsonl, table.md (mean and standard deviation over seeds), ablation.png, study_config.json.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Callable, Dict, List

import keras
import numpy as np
import tensorflow as tf

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.gpt.gpt_pretraining import GPTPretrainingTask
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLanguageModel
from bert_keras.models.gpt_task_model import GPTExtractPooler, GPTTaskModel
from bert_keras.models.reverse_real_tokens import ReverseRealTokens
from bert_keras.tasks import metrics as metrics_lib
from bert_keras.configs.training import OptimizerConfig, TrainingConfig
from bert_keras.training.optimization import create_optimizer
from bert_keras.training.pretraining_task import PretrainingTask
from studies.bert_gpt_ablation.study_config import CLAIMS, AblationVariant, StudyConfig, get_ablation
from studies.bert_gpt_ablation import study_data, zero_shot
from studies.bert_gpt_ablation.in_process import GPTFinetuningTask, fit_in_process, predict
from studies.bert_gpt_ablation.layer_transfer import transfer_layers

TASK_METRIC = {"polarity": "accuracy", "lee_similarity": "pearson", "span": "token_f1",
               "lee_probe": "spearman", "polarity_probe": "accuracy"}
# Feature-based tasks (BERT section 5.3): frozen pretrained features, no fine-tuning.
PROBE_TASKS = ("lee_probe", "polarity_probe")


# === Models ===

def _model_config(study: StudyConfig, vocab_size: int, variant: AblationVariant) -> dict:
  hidden = max(study.num_heads, int(round(study.hidden_size * variant.size)))
  hidden -= hidden % study.num_heads
  return dict(vocab_size=vocab_size, hidden_size=hidden, num_layers=study.num_layers,
              num_heads=study.num_heads, intermediate_size=4 * hidden,
              max_position_embeddings=study.max_seq_length)


def build_backbone(study: StudyConfig, vocab_size: int, variant: AblationVariant,
                   attention: str | None = None, **kwargs) -> keras.Model:
  config = _model_config(study, vocab_size, variant)
  if variant.family == "gpt":
    return GPTDecoder(**config, **kwargs)
  return BertEncoder(**config, type_vocab_size=2, attention=attention or variant.attention,
                     **kwargs)


ELMO_DIRECTIONS = ("ltr", "rtl")


def build_elmo_encoders(study: StudyConfig, vocab_size: int,
                        variant: AblationVariant) -> List[keras.Model]:
  """The two causal encoders of the ELMo-style variant (BERT 5.1): [left-to-right, right-to-left].

  Keras names a variable by the layers it sits in, not by the model that holds them, so two
  BertEncoders side by side would both own `token_embedding/embeddings`, ... and the concatenated
  model could not be checkpointed by variable path (tf.train.Checkpoint via the Trainer). Each
  direction is therefore built in its own name scope: `ltr_encoder/token_embedding/embeddings`,
  `rtl_encoder/...`. Weight order (get_weights / set_weights) is unchanged.
  """
  encoders = []
  for direction in ELMO_DIRECTIONS:
    with keras.name_scope(f"{direction}_encoder"):
      encoders.append(build_backbone(study, vocab_size, variant, attention="causal",
                                     name=f"{direction}_encoder"))
  return encoders


def build_bert_task_model(encoders: List[keras.Model], kind: str, num_outputs: int,
                          span_bilstm: bool = False) -> keras.Model:
  """Heads for BERT-family backbones. One encoder: classification reads the pooled [CLS] state
  (bidirectional) or the last real token's state (causal: [CLS] sees nothing to its right);
  spans score every token, optionally after a randomly initialised BiLSTM (BERT 5.1). Two encoders
  (ELMo-style): LTR states and the re-reversed states of the RTL model on reversed input, concatenated.
  """
  inputs = dict(encoders[0].input)
  states = encoders[0](inputs)
  sequence = states["sequence_output"]
  if len(encoders) == 2:
    reverse = ReverseRealTokens(name="reverse_input")
    reversed_inputs = {"input_word_ids": reverse(inputs["input_word_ids"], inputs["input_mask"]),
                       "input_mask": inputs["input_mask"],
                       "input_type_ids": reverse(inputs["input_type_ids"], inputs["input_mask"])}
    rtl = encoders[1](reversed_inputs)["sequence_output"]
    rtl = ReverseRealTokens(name="reverse_states")(rtl, inputs["input_mask"])
    sequence = keras.layers.Concatenate(name="ltr_rtl")([sequence, rtl])  # (batch, seq, 2H)
  dropout = keras.layers.Dropout(0.1, name="head_dropout")
  if kind == "span":
    if span_bilstm:
      units = sequence.shape[-1] // 2
      sequence = keras.layers.Bidirectional(keras.layers.LSTM(units, return_sequences=True),
                                            name="bilstm")(sequence)
    logits = keras.layers.Dense(2, name="span_logits")(dropout(sequence))  # (batch, seq, 2)
  else:
    if encoders[0].attention == "causal":
      pooled = GPTExtractPooler(name="last_token")(sequence, inputs["input_mask"])
    else:
      pooled = states["pooled_output"]
    logits = keras.layers.Dense(num_outputs, name="classifier")(dropout(pooled))
  logits = keras.layers.Activation("linear", dtype="float32", name="logits")(logits)
  return keras.Model(inputs, {"logits": logits})


class SupervisedTask:
  """Trainer contract for the BERT-family heads: classification / regression / span losses."""

  def __init__(self, kind: str):
    self.kind = kind

  def model_inputs(self, features):
    return {k: v for k, v in features.items() if k != "labels"}

  def loss_sums(self, features, outputs):
    logits, labels = tf.cast(outputs["logits"], tf.float32), features["labels"]
    if self.kind == "regression":
      per_example = tf.square(logits[:, 0] - tf.cast(labels, tf.float32))
    elif self.kind == "span":
      bias = (1.0 - tf.cast(features["input_mask"], tf.float32))[..., None] * -10000.0
      logits = logits + bias  # padding never starts or ends an answer
      xent = lambda i: tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=tf.cast(labels[:, i], tf.int32), logits=logits[..., i])
      per_example = (xent(0) + xent(1)) / 2.0
    else:
      per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=tf.cast(labels, tf.int32), logits=logits)
    return {"loss_sum": tf.reduce_sum(per_example),
            "examples": tf.cast(tf.shape(per_example)[0], tf.float32)}

  def counts(self, features):
    return {"examples": tf.cast(tf.shape(features["labels"])[0], tf.float32)}

  def loss(self, sums):
    return sums["loss_sum"] / tf.maximum(sums["examples"], 1.0)

  def metrics(self, sums):
    return {"task_loss": self.loss(sums)}


# === Runs ===

def _optimizer(lr: float, steps: int, warmup: int, decay: str = "linear"):
  return create_optimizer(OptimizerConfig(learning_rate=lr, num_train_steps=steps,
                                          num_warmup_steps=warmup, weight_decay_rate=0.01,
                                          decay=decay, clip_global_norm=0.0, epsilon=1e-8))


def _run(batch_size: int, seed: int, clip_global_norm: float = 1.0) -> TrainingConfig:
  """The batch, seed and clipping of one in-process training run (in_process.fit_in_process)."""
  return TrainingConfig.from_flat(train_batch_size=batch_size, seed=seed,
                                  clip_global_norm=clip_global_norm)


def _scratch(output_dir: str, *parts) -> str:
  """A run's name under output_dir/runs (runs in process keep no files; the name is logged)."""
  return os.path.join(output_dir, "runs", "_".join(str(p) for p in parts))


def pretrain_key(variant: AblationVariant, reverse: bool = False) -> tuple:
  """(family, objective, size, reverse): one pretrained model serves every variant sharing it."""
  family = "bert" if variant.family == "elmo" else variant.family
  return (family, variant.objective, variant.size, reverse)


def _pretrain_bert(study, vocab, instances, objective, reverse, seed, model_dir):
  variant = AblationVariant("tmp", "bert", objective,
                            attention="causal" if objective == "ltr" else "bidirectional")
  keras.utils.set_random_seed(seed)
  encoder = build_backbone(study, vocab.tokenizer.vocab_size, variant)
  model = BertPretrainer(encoder, objective=objective)
  features = dict(instances)
  original = features.pop("original_ids")
  if objective == "ltr":
    features["input_ids"] = original
    if reverse:  # the RTL half reads the whole row reversed, segment ids too (as when it is used)
      features = {**features,
                  **{k: study_data.reverse_real_tokens(features[k], features["input_mask"])
                     for k in ("input_ids", "segment_ids")}}
  optimizer = _optimizer(study.pretrain_learning_rate, study.pretrain_steps,
                         study.pretrain_warmup_steps)
  fit_in_process(model, PretrainingTask(objective), features, optimizer=optimizer,
                 config=_run(study.pretrain_batch_size, seed), num_steps=study.pretrain_steps)
  return encoder.get_weights()


def _pretrain_gpt(study, vocab, windows, size, seed, model_dir, probe: Callable | None):
  """GPT-1 LM pretraining; with `probe`, called as probe(step, lm) at zero_shot_points + 1 points."""
  variant = AblationVariant("tmp", "gpt", "lm", attention="causal", size=size)
  keras.utils.set_random_seed(seed)
  lm = GPTLanguageModel(build_backbone(study, vocab.tokenizer.vocab_size, variant))
  # GPT-1 section 4.1: Adam(W), linear warmup to the peak, then cosine to 0.
  optimizer = _optimizer(study.pretrain_learning_rate, study.pretrain_steps,
                         study.pretrain_warmup_steps, decay="cosine")
  points = study.zero_shot_points if probe else 1
  bounds = [round(study.pretrain_steps * (i + 1) / points) for i in range(points)]
  if probe:
    probe(0, lm)
  done, step_cache, task = 0, {}, GPTPretrainingTask()
  for i, bound in enumerate(bounds):
    fit_in_process(lm, task, windows, optimizer=optimizer,
                   config=_run(study.pretrain_batch_size, seed * 1000 + i),
                   num_steps=bound - done, step_cache=step_cache)
    done = bound
    if probe:
      probe(done, lm)
  return lm.decoder.get_weights()


def _finetune_steps(study: StudyConfig, n: int) -> int:
  return max(1, math.ceil(n * study.finetune_epochs / study.finetune_batch_size))


def _evaluate(task: str, regression: bool, logits: np.ndarray, dev: dict) -> dict:
  labels = dev["labels"]
  if task == "span":
    mask = dev["bert"]["input_mask"].astype(bool)
    start_logits = np.where(mask, logits[..., 0], -1e9)
    starts = start_logits.argmax(-1)
    end_logits = np.where(mask & (np.arange(mask.shape[1])[None] >= starts[:, None]),
                          logits[..., 1], -1e9)
    ends = end_logits.argmax(-1)
    return {"exact_match": float(np.mean((starts == labels[:, 0]) & (ends == labels[:, 1]))),
            "start_accuracy": float(np.mean(starts == labels[:, 0])),
            "token_f1": span_token_f1(starts, ends, labels[:, 0], labels[:, 1])}
  if regression:
    return {"pearson": metrics_lib.pearson(labels, logits[:, 0]),
            "spearman": metrics_lib.spearman(labels, logits[:, 0])}
  return {"accuracy": metrics_lib.accuracy(labels, logits.argmax(-1))}


def span_token_f1(starts, ends, gold_starts, gold_ends) -> float:
  """SQuAD-style token overlap F1 of predicted [start, end] vs gold spans (inclusive), averaged:
  partial credit, so a head that finds the neighbourhood of the answer scores above zero."""
  starts, ends = np.asarray(starts), np.asarray(ends)
  gold_starts, gold_ends = np.asarray(gold_starts), np.asarray(gold_ends)
  overlap = np.maximum(0, np.minimum(ends, gold_ends) - np.maximum(starts, gold_starts) + 1)
  precision = overlap / np.maximum(ends - starts + 1, 1)
  recall = overlap / np.maximum(gold_ends - gold_starts + 1, 1)
  f1 = np.where(overlap > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-9), 0.0)
  return float(f1.mean())


# === Feature-based probes (BERT section 5.3: frozen features, no fine-tuning) ===

def frozen_features(study: StudyConfig, vocab, variant: AblationVariant, pretrained, seed: int,
                    inputs: dict, batch_size: int = 64) -> tuple:
  """Sum over real tokens of the concatenated outputs of all L layers (BERT 5.3 concatenates the
  top four; the study's models have L <= 4), per row: returns (sums (rows, L*H[*2]), counts (rows,)).

  The variant's pretrained weights, or its random initialisation under `seed` when not
  pretrained. ELMo-style: the LTR model on the text and the RTL model on the reversed text,
  features concatenated (a sum over tokens does not depend on their order).
  """
  keras.utils.set_random_seed(seed)
  vocab_size = vocab.tokenizer.vocab_size
  layout = "gpt" if variant.family == "gpt" else "bert"
  rows = inputs[layout]
  if variant.family == "elmo":
    models = build_elmo_encoders(study, vocab_size, variant)
    for model, reverse in zip(models, (False, True)):
      model.set_weights(pretrained[pretrain_key(variant, reverse)])
    reversed_rows = {k: study_data.reverse_real_tokens(v, rows["input_mask"]) for k, v in rows.items()}
    feeds = [rows, reversed_rows]
  else:
    model = build_backbone(study, vocab_size, variant)
    if variant.pretrained:
      model.set_weights(pretrained[pretrain_key(variant)])
    models, feeds = [model], [rows]
  mask = rows["input_mask"].astype(np.float32)
  parts = []
  for model, feed in zip(models, feeds):
    sums = []
    for b in range(0, len(mask), batch_size):
      batch = {k: v[b:b + batch_size] for k, v in feed.items()}
      layers = model(batch, training=False)["encoder_outputs"]
      states = np.concatenate([keras.ops.convert_to_numpy(x) for x in layers], axis=-1)
      sums.append((states * mask[b:b + batch_size, :, None]).sum(1))
    parts.append(np.concatenate(sums))
  return np.concatenate(parts, axis=-1), mask.sum(1)


def lee_probe_scores(sums: np.ndarray, counts: np.ndarray, data: dict) -> dict:
  """Mean-pooled document vectors (over all chunks' tokens), centred over the 50 documents (mean
  pooled states share a large common direction), cosine similarity vs the human ratings."""
  docs = int(data["doc_index"].max()) + 1
  vectors = np.zeros((docs, sums.shape[1]))
  np.add.at(vectors, data["doc_index"], sums)
  vectors /= np.bincount(data["doc_index"], weights=counts, minlength=docs)[:, None]
  vectors -= vectors.mean(0, keepdims=True)
  vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
  i, j = data["pairs"][:, 0], data["pairs"][:, 1]
  cosine = (vectors[i] * vectors[j]).sum(-1)
  return {"spearman": metrics_lib.spearman(data["ratings"], cosine),
          "pearson": metrics_lib.pearson(data["ratings"], cosine)}


def polarity_probe_scores(sums: np.ndarray, counts: np.ndarray, data: dict, seed: int,
                          folds: int = 10, repeats: int = 3) -> dict:
  """Logistic regression on mean-pooled frozen features, stratified `folds`-fold cross-validation
  over all 200 sentences, repeated `repeats` times: every sentence is a test sentence, so the
  metric rests on 200 sentences instead of 40 (one sentence = 0.5 points)."""
  from sklearn.linear_model import LogisticRegression  # pylint: disable=g-import-not-at-top
  from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score
  from sklearn.pipeline import make_pipeline
  from sklearn.preprocessing import StandardScaler
  features = sums / np.maximum(counts, 1.0)[:, None]
  probe = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
  splits = RepeatedStratifiedKFold(n_splits=folds, n_repeats=repeats, random_state=seed)
  scores = cross_val_score(probe, features, data["labels"], cv=splits, scoring="accuracy")
  return {"accuracy": float(scores.mean())}


def probe_variant(study: StudyConfig, vocab, task: str, data: dict, variant: AblationVariant,
                  pretrained: Dict[tuple, list], seed: int) -> dict:
  sums, counts = frozen_features(study, vocab, variant, pretrained, seed, data)
  if task == "lee_probe":
    return lee_probe_scores(sums, counts, data)
  return polarity_probe_scores(sums, counts, data, seed)


def finetune_variant(study: StudyConfig, vocab, task: str, data: dict, variant: AblationVariant,
                     pretrained: Dict[tuple, list], seed: int, model_dir: str,
                     transfer_k: int | None = None) -> dict:
  """Builds the variant's task model (pretrained weights or random), fine-tunes it, scores dev."""
  keras.utils.set_random_seed(seed)
  regression = bool(data.get("regression"))
  train, dev = data["train"], data["dev"]
  steps = _finetune_steps(study, len(train["labels"]))
  kind = "span" if task == "span" else ("regression" if regression else "classification")
  vocab_size = vocab.tokenizer.vocab_size
  if variant.family == "gpt":
    decoder = build_backbone(study, vocab_size, variant)
    if variant.pretrained:
      source = pretrained[pretrain_key(variant)]
      if transfer_k is None:
        decoder.set_weights(source)
      else:
        donor = build_backbone(study, vocab_size, variant)
        donor.set_weights(source)
        transfer_layers(donor, decoder, transfer_k)
    task_type = "similarity" if regression else "classification"
    model = GPTTaskModel(decoder, task_type, num_outputs=1 if regression else 2,
                         with_lm_logits=variant.lm_coef > 0)
    optimizer = _optimizer(study.finetune_learning_rate, steps, max(1, steps // 10))
    fit_in_process(model, GPTFinetuningTask(model.task_type, variant.lm_coef),
                   {**train["gpt"], "labels": train["labels"]}, optimizer=optimizer,
                   config=_run(study.finetune_batch_size, seed), num_steps=steps)
    logits = predict(model, dev["gpt"])
  else:
    if variant.family == "elmo":
      encoders = build_elmo_encoders(study, vocab_size, variant)
      for enc, reverse in zip(encoders, (False, True)):
        enc.set_weights(pretrained[pretrain_key(variant, reverse)])
    else:
      enc = build_backbone(study, vocab_size, variant)
      if variant.pretrained:
        enc.set_weights(pretrained[pretrain_key(variant)])
      encoders = [enc]
    model = build_bert_task_model(encoders, kind, 1 if regression else 2, variant.span_bilstm)
    optimizer = _optimizer(study.finetune_learning_rate, steps, max(1, steps // 10))
    fit_in_process(model, SupervisedTask(kind), {**train["bert"], "labels": train["labels"]},
                   optimizer=optimizer, config=_run(study.finetune_batch_size, seed),
                   num_steps=steps)
    logits = predict(model, dev["bert"])
  return _evaluate(task, regression, logits, dev)


def run_study(study: StudyConfig, output_dir: str, log: Callable[[str], None] = print) -> List[dict]:
  """Runs the whole study; returns the result rows (also written to output_dir)."""
  os.makedirs(output_dir, exist_ok=True)
  write_text(os.path.join(output_dir, "study_config.json"), study.to_json())
  started = time.time()
  documents = study_data.read_documents(study.corpora)
  vocab = study_data.build_vocabulary(documents, study.vocab_size)
  token_docs = study_data.tokenize_documents(vocab, documents)
  windows = study_data.gpt_windows(token_docs, study.max_seq_length)
  sets = {}
  for task in study.tasks:
    if task == "span":
      sets[task] = study_data.span_sets(vocab, study.max_seq_length, study.span_examples,
                                        per_sentence=study.span_per_sentence)
    elif task == "lee_probe":
      sets[task] = study_data.lee_probe_set(vocab, study.max_seq_length)
    elif task == "polarity_probe":
      sets[task] = study_data.polarity_probe_set(vocab, study.max_seq_length)
    else:
      sets[task] = study_data.classification_sets(
          vocab, task, study.max_seq_length,
          max_train=study.lee_train_pairs if task == "lee_similarity" else None)
  polarity_texts = None
  if study.zero_shot_points:
    polarity = sets.get("polarity") or study_data.classification_sets(vocab, "polarity",
                                                                       study.max_seq_length)
    polarity_texts = polarity["train"]["texts"] + polarity["dev"]["texts"]
    polarity_labels = np.concatenate([polarity["train"]["labels"], polarity["dev"]["labels"]])
  log(f"data ready in {time.time() - started:.0f}s: {len(token_docs)} documents, "
      f"{windows['input_ids'].shape[0]} LM windows of {study.max_seq_length}, vocab "
      f"{vocab.tokenizer.vocab_size}; " + ", ".join(
          f"{t}: {len(d['bert']['input_mask'])} rows (probe)" if t in PROBE_TASKS else
          f"{t}: {len(d['train']['labels'])} train / {len(d['dev']['labels'])} dev"
          for t, d in sets.items()))

  rows: List[dict] = []
  partial = os.path.join(output_dir, "results.jsonl")
  if os.path.exists(partial):
    os.remove(partial)

  def add(row):
    rows.append(row)
    log(json.dumps(row))
    with open(partial, "a", encoding="utf-8") as f:  # streamed; rewritten atomically at the end
      f.write(json.dumps(row) + "\n")

  instances_by_seed: Dict[int, dict] = {}

  def pretrain(key, seed):
    t0 = time.time()
    model_dir = _scratch(output_dir, "pretrain", seed, *key)
    if key[0] == "gpt":
      probe = None
      if key[2] == 1.0 and polarity_texts:
        def probe(step, lm):
          predictions = zero_shot.zero_shot_sentiment(lm, vocab.tokenizer, polarity_texts,
                                                      study.max_seq_length)
          add({"experiment": "zero_shot", "variant": "gpt1", "task": "polarity",
               "metric": "accuracy", "step": step, "seed": seed,
               "value": metrics_lib.accuracy(polarity_labels, predictions)})
      weights = _pretrain_gpt(study, vocab, windows, key[2], seed, model_dir, probe)
    else:
      if seed not in instances_by_seed:
        instances_by_seed[seed] = study_data.bert_instances(vocab, token_docs, study.max_seq_length,
                                                            seed)
      weights = _pretrain_bert(study, vocab, instances_by_seed[seed], key[1], key[3], seed,
                               model_dir)
    log(f"seed {seed}: pretrained {key} in {time.time() - t0:.0f}s")
    return weights

  for seed in study.seeds:
    pretrained = _LazyPretrained(lambda key, seed=seed: pretrain(key, seed))
    instances_by_seed.clear()
    for task, variants in study.tasks.items():
      for name in variants:
        variant = get_ablation(name)
        t0 = time.time()
        if task in PROBE_TASKS:
          scores = probe_variant(study, vocab, task, sets[task], variant, pretrained, seed)
        else:
          scores = finetune_variant(study, vocab, task, sets[task], variant, pretrained, seed,
                                    _scratch(output_dir, "finetune", seed, task, name))
        for metric, value in scores.items():
          add({"experiment": "ablation", "variant": name, "task": task, "metric": metric,
               "seed": seed, "value": value, "seconds": round(time.time() - t0, 1)})
    if study.layer_transfer_task:
      task = study.layer_transfer_task
      metric = TASK_METRIC[task]
      full = [r["value"] for r in rows if r["experiment"] == "ablation" and r["seed"] == seed
              and r["variant"] == "gpt1" and r["task"] == task and r["metric"] == metric]
      for k in range(study.num_layers + 1):
        if k == study.num_layers and full:
          value = full[0]  # all L layers transferred is the full gpt1 run itself
        else:
          scores = finetune_variant(study, vocab, task, sets[task], get_ablation("gpt1"),
                                    pretrained, seed, _scratch(output_dir, "transfer", seed, k),
                                    transfer_k=k)
          value = scores[metric]
        add({"experiment": "layer_transfer", "variant": f"gpt1_k{k}", "task": task,
             "metric": metric, "layers": k, "seed": seed, "value": value})
  write_report(rows, study, output_dir)
  log(f"study done in {time.time() - started:.0f}s")
  return rows


class _LazyPretrained(dict):
  """key -> pretrained weights, pretraining on first use (results stream in from the start)."""

  def __init__(self, build):
    super().__init__()
    self._build = build

  def __missing__(self, key):
    self[key] = self._build(key)
    return self[key]


def write_report(rows: List[dict], study: StudyConfig, output_dir: str) -> None:
  """results.jsonl, table.md and ablation.png for `rows` (of one run or merged runs)."""
  os.makedirs(output_dir, exist_ok=True)
  write_text(os.path.join(output_dir, "results.jsonl"),
                "".join(json.dumps(r) + "\n" for r in rows))
  write_text(os.path.join(output_dir, "table.md"), markdown_table(rows, study))
  plot(rows, study, os.path.join(output_dir, "ablation.png"))


def merge_runs(run_dirs: List[str], study: StudyConfig, output_dir: str) -> List[dict]:
  """Merges studies run as separate processes (e.g. one per seed) into one report."""
  rows = []
  for run_dir in run_dirs:
    path = os.path.join(run_dir, "results.jsonl")
    if not os.path.exists(path):
      raise UserError(f"{path}: no results (did that study run finish?)")
    with open(path, encoding="utf-8") as f:
      rows += [json.loads(line) for line in f if line.strip()]
  # The same measurement from two runs (e.g. a shared zero-shot probe) counts once: the first.
  seen, unique = set(), []
  for row in rows:
    key = tuple(row.get(k) for k in ("experiment", "variant", "task", "metric", "seed", "step",
                                     "layers"))
    if key not in seen:
      seen.add(key)
      unique.append(row)
  rows = unique
  seeds = tuple(sorted({r["seed"] for r in rows}))
  # Runs of different presets (e.g. `signal` + `signal_extra`) measure variants the given preset
  # does not list; the table and plot are drawn from study.tasks, so add them (preset order first).
  tasks = {t: list(v) for t, v in study.tasks.items()}
  for row in rows:
    if row["experiment"] == "ablation":
      variants = tasks.setdefault(row["task"], [])
      if row["variant"] not in variants:
        variants.append(row["variant"])
  study = study.replace(seeds=seeds, tasks=tasks)
  os.makedirs(output_dir, exist_ok=True)
  write_text(os.path.join(output_dir, "study_config.json"), study.to_json())
  write_report(rows, study, output_dir)
  return rows


# === Reporting ===

def summarize(values: List[float]) -> str:
  """"mean ± sample std"; one value is shown with (n=1), as it has no spread."""
  values = np.asarray(values, float)
  if len(values) < 2:
    return f"{values.mean():.3f} (n=1)"
  return f"{values.mean():.3f} ± {float(values.std(ddof=1)):.3f}"


def markdown_table(rows: List[dict], study: StudyConfig) -> str:
  """Mean ± sample standard deviation over seeds, one table per experiment."""
  n = len(study.seeds)
  lines = [f"Seeds: {list(study.seeds)} (n={n}); ± is the sample standard deviation over seeds.", ""]
  ablation = [r for r in rows if r["experiment"] == "ablation" and r["metric"] == TASK_METRIC[r["task"]]]
  tasks = list(study.tasks)
  names = []
  for t in tasks:
    names += [v for v in study.tasks[t] if v not in names]
  lines.append("| variant | " + " | ".join(f"{t} ({TASK_METRIC[t]})" for t in tasks) + " |")
  lines.append("|---" * (len(tasks) + 1) + "|")
  for name in names:
    cells = []
    for t in tasks:
      values = [r["value"] for r in ablation if r["variant"] == name and r["task"] == t]
      cells.append(summarize(values) if values else "")
    lines.append(f"| {name} | " + " | ".join(cells) + " |")
  lines += _claims_table(ablation, study.seeds)
  lines += _secondary_table(rows, study.seeds)
  transfer = [r for r in rows if r["experiment"] == "layer_transfer"]
  if transfer:
    lines += ["", f"Layers transferred (GPT-1 Figure 2 left), {transfer[0]['task']} "
              f"{transfer[0]['metric']}:", "", "| k | score |", "|---|---|"]
    for k in sorted({r["layers"] for r in transfer}):
      lines.append(f"| {k} | {summarize([r['value'] for r in transfer if r['layers'] == k])} |")
  zero = [r for r in rows if r["experiment"] == "zero_shot"]
  if zero:
    lines += ["", "Zero-shot sentiment ('very positive' vs 'very negative', all 200 polarity "
              "sentences) along LM pretraining (GPT-1 Figure 2 right):", "",
              "| pretraining step | accuracy |", "|---|---|"]
    for step in sorted({r["step"] for r in zero}):
      lines.append(f"| {step} | {summarize([r['value'] for r in zero if r['step'] == step])} |")
  return "\n".join(lines) + "\n"


def _by_seed(rows: List[dict], variant: str, task: str, metric: str) -> Dict[int, float]:
  return {r["seed"]: r["value"] for r in rows if r["experiment"] == "ablation"
          and r["variant"] == variant and r["task"] == task and r["metric"] == metric}


def _claims_table(ablation: List[dict], seeds) -> List[str]:
  """The papers' claims (study_config.CLAIMS) as paired differences A - B over the seeds both
  variants ran, on each task's main metric: mean ± sample std, and in how many seeds A > B."""
  lines = []
  for claim, a, b in CLAIMS:
    for task in dict.fromkeys(r["task"] for r in ablation):
      metric = TASK_METRIC[task]
      va, vb = _by_seed(ablation, a, task, metric), _by_seed(ablation, b, task, metric)
      paired = [s for s in seeds if s in va and s in vb]
      if not paired:
        continue
      diffs = [va[s] - vb[s] for s in paired]
      wins = sum(d > 0 for d in diffs)
      lines.append(f"| {claim} | {a} - {b} | {task} ({metric}) | {summarize(diffs)} | "
                   f"{wins}/{len(paired)} |")
  if not lines:
    return []
  return ["", "The papers' claims as paired differences (A - B per seed; > 0 agrees with the "
          "paper):", "", "| claim | A - B | task | difference | seeds A > B |",
          "|---|---|---|---|---|", *lines]


def _secondary_table(rows: List[dict], seeds) -> List[str]:
  """Every ablation metric (main and secondary, e.g. Lee Pearson, span exact match), per seed."""
  ablation = [r for r in rows if r["experiment"] == "ablation"]
  keys = list(dict.fromkeys((r["task"], r["metric"], r["variant"]) for r in ablation))
  if not keys:
    return []
  lines = ["", "Every metric per seed (" + ", ".join(f"seed {s}" for s in seeds) + "):", "",
           "| task | metric | variant | per seed | mean ± std |", "|---|---|---|---|---|"]
  for task, metric, variant in sorted(keys, key=lambda k: (k[0], k[1] != TASK_METRIC[k[0]], k[1])):
    values = _by_seed(ablation, variant, task, metric)
    per_seed = ", ".join(f"{values[s]:.3f}" if s in values else "-" for s in seeds)
    lines.append(f"| {task} | {metric} | {variant} | {per_seed} | "
                 f"{summarize(list(values.values()))} |")
  return lines


def plot(rows: List[dict], study: StudyConfig, path: str) -> None:
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top

  tasks = list(study.tasks)
  fig, axes = plt.subplots(1, len(tasks) + 2, figsize=(4.2 * (len(tasks) + 2), 4.2))
  for ax, task in zip(axes, tasks):
    names = list(study.tasks[task])
    metric = TASK_METRIC[task]
    values = [[r["value"] for r in rows if r["experiment"] == "ablation" and r["task"] == task
               and r["variant"] == n and r["metric"] == metric] for n in names]
    means = [np.mean(v) if v else np.nan for v in values]
    stds = [np.std(v, ddof=1) if len(v) > 1 else 0.0 for v in values]
    ax.barh(range(len(names)), means, xerr=stds, color="tab:blue", alpha=0.8)
    for i, v in enumerate(values):
      ax.plot(v, [i] * len(v), "k.", markersize=4)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_title(f"{task} ({metric})", fontsize=9)
  for ax, experiment, key, label in ((axes[-2], "layer_transfer", "layers", "layers transferred k"),
                                     (axes[-1], "zero_shot", "step", "LM pretraining step")):
    sel = [r for r in rows if r["experiment"] == experiment]
    xs = sorted({r[key] for r in sel})
    for seed in study.seeds:
      ys = [np.mean([r["value"] for r in sel if r[key] == x and r["seed"] == seed]) for x in xs]
      ax.plot(xs, ys, "-", color="0.7", linewidth=0.8)
    means = [np.mean([r["value"] for r in sel if r[key] == x]) for x in xs]
    ax.plot(xs, means, "o-", color="tab:red")
    ax.set_xlabel(label, fontsize=8)
    ax.set_title("GPT-1 " + ("Fig. 2 left" if experiment == "layer_transfer" else
                             "Fig. 2 right (zero-shot)"), fontsize=9)
  fig.tight_layout()
  tmp = f"{path}.tmp-{os.getpid()}.png"
  fig.savefig(tmp, dpi=110)
  plt.close(fig)
  os.replace(tmp, path)
