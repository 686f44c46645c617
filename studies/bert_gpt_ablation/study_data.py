"""The ablation study's data, all real and embedded: one shared BPE vocabulary, the pretraining
corpora (Wikipedia dump, Lee background), and the fine-tuning sets in both models' input layouts.

BERT-style models read `[CLS] A [SEP] B [SEP]`; GPT reads `<start> A <delim> B <extract>`. Both use
the same BPE pieces, so the comparison varies the objective and the attention, not the vocabulary.
"""

from __future__ import annotations

import dataclasses
import random
from typing import List, Sequence

import numpy as np
import tensorflow as tf

from bert_keras import resources
from bert_keras.data import pretraining_instances as pi
from bert_keras.configs.pretraining_data import default_max_predictions
from bert_keras.data.corpus_text import split_sentences
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_input_transform import GPTInputTransform
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.gpt.lm_data import contiguous_windows, read_corpus
from bert_keras.tasks.registry import get_task
from bert_keras.configs.tasks import TaskConfig

BERT_PIECES = ("[CLS]", "[SEP]", "[MASK]")


@dataclasses.dataclass
class StudyVocabulary:
  tokenizer: GPTTokenizer
  cls_id: int
  sep_id: int
  mask_id: int


def build_vocabulary(documents: Sequence[Sequence[str]], vocab_size: int) -> StudyVocabulary:
  """Trains the shared BPE on the pretraining documents, with BERT's specials as extra controls."""
  proto = train_bpe_model([" ".join(d) for d in documents], vocab_size,
                          extra_control_symbols=BERT_PIECES)
  tokenizer = GPTTokenizer(model_proto=proto)
  cls_id, sep_id, mask_id = (tokenizer.token_to_id(p) for p in BERT_PIECES)
  return StudyVocabulary(tokenizer, cls_id, sep_id, mask_id)


def read_documents(corpora: Sequence[str]) -> List[List[str]]:
  return [doc for name in corpora for doc in read_corpus(name)]


def tokenize_documents(vocab: StudyVocabulary, documents) -> List[List[List[int]]]:
  """Documents of sentences -> documents of sentences of ids (empty sentences dropped)."""
  out = []
  for doc in documents:
    sentences = [s for s in vocab.tokenizer.encode(list(doc)) if s]
    if sentences:
      out.append(sentences)
  return out


def gpt_windows(token_docs, seq_length: int) -> dict:
  return contiguous_windows([[t for s in d for t in s] for d in token_docs], seq_length)


def bert_instances(vocab: StudyVocabulary, token_docs, seq_length: int, seed: int,
                   dupe_factor: int = 2) -> dict:
  """BERT's pretraining examples (MLM + NSP, appendix A.1-A.2) as int arrays, plus the unmasked
  `original_ids` that the LTR/RTL objectives predict."""
  special = pi.SpecialIds(vocab.cls_id, vocab.sep_id, vocab.mask_id, vocab.tokenizer.vocab_size)
  max_predictions = default_max_predictions(seq_length)
  rng = random.Random(seed)
  rows = []
  for _ in range(dupe_factor):
    for index, doc in enumerate(token_docs):
      def other(r, index=index):
        j = r.randint(0, len(token_docs) - 2)
        return token_docs[j + (j >= index)]
      for inst in pi.create_instances_from_document(doc, other, seq_length, 0.1, 0.15,
                                                    max_predictions, special, rng):
        row = pi.pad_instance(inst, seq_length, max_predictions)
        original = list(row["input_ids"])
        for p, t in zip(inst.masked_lm_positions, inst.masked_lm_ids):
          original[p] = t
        row["original_ids"] = original
        rows.append(row)
  rng.shuffle(rows)
  features = {k: np.array([r[k] for r in rows]) for k in rows[0]}
  return {k: v.astype(np.float32 if k == "masked_lm_weights" else np.int32)
          for k, v in features.items()}


def reverse_real_tokens(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
  """Reverses each row's real (mask = 1) prefix in place of the row; padding stays at the right.
  A left-to-right model over reversed text is a right-to-left model (the ELMo-style RTL half)."""
  out = ids.copy()
  lengths = mask.sum(-1)
  for index in np.ndindex(ids.shape[:-1]):
    n = lengths[index]
    out[index][:n] = ids[index][:n][::-1]
  return out


# === Fine-tuning sets ===

def _pack_bert(vocab: StudyVocabulary, a, b, seq_length: int) -> dict:
  ids, types = [], []
  for i, seg_a in enumerate(a):
    seg_b = b[i] if b is not None else None
    seg_a, seg_b = list(seg_a), list(seg_b) if seg_b is not None else None
    budget = seq_length - (3 if seg_b is not None else 2)
    while len(seg_a) + len(seg_b or []) > budget:
      longer = seg_a if seg_b is None or len(seg_a) >= len(seg_b) else seg_b
      longer.pop()
    row = [vocab.cls_id] + seg_a + [vocab.sep_id]
    type_row = [0] * len(row)
    if seg_b is not None:
      row += seg_b + [vocab.sep_id]
      type_row += [1] * (len(seg_b) + 1)
    ids.append(row + [0] * (seq_length - len(row)))
    types.append(type_row + [0] * (seq_length - len(type_row)))
  ids = np.array(ids, np.int32)
  # Pad id 0 is never produced from text, so real tokens are exactly the non-zero ids.
  return {"input_word_ids": ids, "input_mask": (ids != 0).astype(np.int32),
          "input_type_ids": np.array(types, np.int32)}


def _pack_gpt(vocab: StudyVocabulary, a, b, seq_length: int, pair_kind: str) -> dict:
  tok = vocab.tokenizer
  transform = GPTInputTransform(seq_length, tok.start_id, tok.delimiter_id, tok.extract_id, tok.pad_id)
  ra = tf.ragged.constant(a, dtype=tf.int32, ragged_rank=1) if a else None
  if b is None:
    out = transform.classification(ra)
  else:
    rb = tf.ragged.constant(b, dtype=tf.int32, ragged_rank=1)
    out = transform.similarity(ra, rb) if pair_kind == "similarity" else transform.entailment(ra, rb)
  return {k: v.numpy() for k, v in out.items()}


def classification_sets(vocab: StudyVocabulary, task_name: str, seq_length: int,
                        max_train: int | None = None, seed: int = 0) -> dict:
  """{"train"/"dev": {"bert": inputs, "gpt": inputs, "labels": array}} for polarity / lee_similarity,
  read by the project's task registry (bert_keras.tasks)."""
  task = get_task(TaskConfig(task=task_name, max_seq_length=seq_length))
  out = {}
  for split in ("train", "dev"):
    examples = task.read_examples("", split)
    if split == "train" and max_train and len(examples) > max_train:
      examples = random.Random(seed).sample(examples, max_train)
    a = vocab.tokenizer.encode([e.text_a for e in examples])
    b = vocab.tokenizer.encode([e.text_b for e in examples]) if task.is_pair else None
    if task.is_regression:
      labels = np.array([float(e.label) for e in examples], np.float32)
    else:
      labels = np.array([task.label_names.index(e.label) for e in examples], np.int32)
    out[split] = {"bert": _pack_bert(vocab, a, b, seq_length),
                  "gpt": _pack_gpt(vocab, a, b, seq_length, "similarity"),
                  "labels": labels, "texts": [e.text_a for e in examples]}
  out["regression"] = task.is_regression
  return out


def span_sets(vocab: StudyVocabulary, seq_length: int, num_examples: int, seed: int = 0,
              answer_length: int = 2, cue_length: int = 3, per_sentence: int = 1) -> dict:
  """A small extractive span task on real text the models were not pretrained on (lee.cor).

  Question = the `cue_length` pieces that FOLLOW the answer in the passage; answer = the
  `answer_length` pieces just before them; passage = the sentence. Input `[CLS] cue [SEP] passage
  [SEP]`, labels = start/end positions. Finding the answer needs the right context of the answer's
  tokens, which is exactly what BERT section 5.1 says a left-to-right model lacks at span tasks.
  Documents 0-39 give train, 40-49 dev; only cues that occur once in their passage are kept.
  `per_sentence` > 1 asks up to that many questions (distinct answers) per sentence: a larger,
  less noisy dev set from the same 10 held-out documents.
  """
  with open(resources.lee_documents_path(), encoding="utf-8", errors="replace") as f:
    documents = [line for line in f if line.strip()]
  rng = random.Random(seed)
  splits = {"train": [], "dev": []}
  budget = seq_length - 3 - cue_length
  for index, doc in enumerate(documents):
    split = "train" if index < 40 else "dev"
    for sentence in vocab.tokenizer.encode(split_sentences(doc)):
      sentence = sentence[:budget]
      if len(sentence) < answer_length + cue_length + 2:
        continue
      starts = set()
      for _ in range(3 * per_sentence):
        start = rng.randint(0, len(sentence) - answer_length - cue_length)
        cue = sentence[start + answer_length:start + answer_length + cue_length]
        hits = [i for i in range(len(sentence) - cue_length + 1) if sentence[i:i + cue_length] == cue]
        if len(hits) == 1 and start not in starts:
          starts.add(start)
          splits[split].append((cue, sentence, start))
          if len(starts) == per_sentence:
            break
  out = {}
  for split, rows in splits.items():
    rng.shuffle(rows)
    rows = rows[:num_examples if split == "train" else max(num_examples // 4, 1)]
    inputs = _pack_bert(vocab, [r[0] for r in rows], [r[1] for r in rows], seq_length)
    offset = 2 + cue_length  # [CLS] cue [SEP]
    starts = np.array([offset + r[2] for r in rows], np.int32)
    out[split] = {"bert": inputs, "labels": np.stack([starts, starts + answer_length - 1], -1)}
  return out


# === Feature-based (frozen) probe sets, BERT section 5.3 ===

def _pack_single(vocab: StudyVocabulary, pieces, seq_length: int) -> dict:
  """Single segments in both layouts: {"bert": `[CLS] x [SEP]`, "gpt": `<start> x <extract>`}."""
  return {"bert": _pack_bert(vocab, pieces, None, seq_length),
          "gpt": _pack_gpt(vocab, pieces, None, seq_length, "classification")}


def lee_probe_set(vocab: StudyVocabulary, seq_length: int) -> dict:
  """All 50 Lee documents cut into chunks of seq_length - 2 pieces, for mean-pooled features, and
  the 1,225 rated pairs (i < j) with their mean human similarity.

  Returns {"bert"/"gpt": packed chunks (chunks, seq), "doc_index": (chunks,) document of each
  chunk, "pairs": (1225, 2) int, "ratings": (1225,) float}. No training: the whole rated set scores
  every model, so the metric has no train/dev split noise.
  """
  from bert_keras.tasks import lee_similarity  # pylint: disable=g-import-not-at-top
  documents = lee_similarity.read_documents(resources.lee_documents_path())
  ratings = lee_similarity.read_similarities(resources.lee_similarities_path(), len(documents))
  chunks, doc_index = [], []
  size = seq_length - 2
  for index, pieces in enumerate(vocab.tokenizer.encode(documents)):
    for start in range(0, max(len(pieces), 1), size):
      chunks.append(pieces[start:start + size])
      doc_index.append(index)
  pairs = [(i, j) for i in range(len(documents)) for j in range(i + 1, len(documents))]
  return {**_pack_single(vocab, chunks, seq_length), "doc_index": np.array(doc_index),
          "pairs": np.array(pairs), "ratings": np.array([ratings[i][j] for i, j in pairs])}


def polarity_probe_set(vocab: StudyVocabulary, seq_length: int) -> dict:
  """All 200 polarity sentences (train + dev) for a cross-validated probe on frozen features."""
  task = get_task(TaskConfig(task="polarity", max_seq_length=seq_length))
  examples = task.read_examples("", "train") + task.read_examples("", "dev")
  pieces = vocab.tokenizer.encode([e.text_a for e in examples])
  return {**_pack_single(vocab, pieces, seq_length),
          "labels": np.array([task.label_names.index(e.label) for e in examples], np.int32)}
