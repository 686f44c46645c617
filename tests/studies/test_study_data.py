"""The ablation study's data: both models' packing, the span task's labels and the unmasked ids the
LTR objective predicts. A label off by one position, or a segment packed in the wrong slot, leaves
every variant training on noise while the study still runs."""

import types

import numpy as np
import pytest

from bert_keras import resources
from bert_keras.data.corpus_text import split_sentences
from studies.bert_gpt_ablation import study_data
from bert_keras.tasks.registry import get_task
from bert_keras.configs.tasks import TaskConfig

SEQ = 24


@pytest.fixture(scope="module")
def vocab():
  return study_data.build_vocabulary(study_data.read_documents(["lee_background"]), 300)


def test_pack_bert_truncates_the_longer_segment_and_sets_segment_ids():
  ids = types.SimpleNamespace(cls_id=1, sep_id=2)
  packed = study_data._pack_bert(ids, [[5, 6, 7, 8], [5], [5]], [[9, 10], [6, 7, 8, 9, 10, 11], []],
                                 8)
  np.testing.assert_array_equal(packed["input_word_ids"], [[1, 5, 6, 7, 2, 9, 10, 2],
                                                           [1, 5, 2, 6, 7, 8, 9, 2],
                                                           [1, 5, 2, 2, 0, 0, 0, 0]])
  np.testing.assert_array_equal(packed["input_type_ids"], [[0, 0, 0, 0, 0, 1, 1, 1],
                                                           [0, 0, 0, 1, 1, 1, 1, 1],
                                                           [0, 0, 0, 1, 0, 0, 0, 0]])
  np.testing.assert_array_equal(packed["input_mask"], [[1] * 8, [1] * 8, [1] * 4 + [0] * 4])
  single = study_data._pack_bert(ids, [[5, 6]], None, 6)
  np.testing.assert_array_equal(single["input_word_ids"], [[1, 5, 6, 2, 0, 0]])
  np.testing.assert_array_equal(single["input_type_ids"], [[0] * 6])


def test_pack_gpt_layouts():
  tokens = types.SimpleNamespace(tokenizer=types.SimpleNamespace(start_id=1, delimiter_id=2,
                                                                 extract_id=3, pad_id=0))
  single = study_data._pack_gpt(tokens, [[5, 6]], None, 6, "classification")
  np.testing.assert_array_equal(single["input_word_ids"], [[1, 5, 6, 3, 0, 0]])
  np.testing.assert_array_equal(single["input_mask"], [[1, 1, 1, 1, 0, 0]])
  pair = study_data._pack_gpt(tokens, [[5]], [[6, 7]], 6, "similarity")
  np.testing.assert_array_equal(pair["input_word_ids"], [[[1, 5, 2, 6, 7, 3], [1, 6, 7, 2, 5, 3]]])


def test_reverse_real_tokens_keeps_padding_right():
  ids = np.array([[1, 2, 3, 0], [4, 5, 6, 7]])
  mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])
  np.testing.assert_array_equal(study_data.reverse_real_tokens(ids, mask),
                                [[3, 2, 1, 0], [7, 6, 5, 4]])


def test_span_labels_point_at_the_answer_before_the_cue(vocab):
  answer_length, cue_length = 2, 3
  sets = study_data.span_sets(vocab, SEQ, 16, answer_length=answer_length, cue_length=cue_length)
  assert len(sets["train"]["labels"]) == 16 and len(sets["dev"]["labels"]) == 4
  # Passages come from the held-out Lee documents: 0-39 train, 40-49 dev (first SEQ-6 pieces).
  with open(resources.lee_documents_path(), encoding="utf-8", errors="replace") as f:
    documents = [line for line in f if line.strip()]
  budget = SEQ - 3 - cue_length
  passages = {split: {tuple(s[:budget]) for doc in docs
                      for s in vocab.tokenizer.encode(split_sentences(doc))}
              for split, docs in (("train", documents[:40]), ("dev", documents[40:]))}
  for split in ("train", "dev"):
    inputs, labels = sets[split]["bert"], sets[split]["labels"]
    for ids, types_, mask, (start, end) in zip(inputs["input_word_ids"], inputs["input_type_ids"],
                                               inputs["input_mask"], labels):
      n = int(mask.sum())
      ids = ids.tolist()
      # [CLS] cue [SEP] passage [SEP], padding after
      assert ids[0] == vocab.cls_id and ids[1 + cue_length] == vocab.sep_id
      assert ids[n - 1] == vocab.sep_id and not any(ids[n:])
      np.testing.assert_array_equal(types_[:n], [0] * (2 + cue_length) + [1] * (n - 2 - cue_length))
      cue, passage = ids[1:1 + cue_length], ids[2 + cue_length:n - 1]
      assert tuple(passage) in passages[split]
      # The answer is the `answer_length` pieces right before the cue, which occurs once.
      assert end - start == answer_length - 1 and 2 + cue_length <= start
      assert ids[end + 1:end + 1 + cue_length] == cue
      assert sum(passage[i:i + cue_length] == cue for i in range(len(passage))) == 1


def test_classification_sets_pack_the_task_text_in_both_layouts(vocab):
  sets = study_data.classification_sets(vocab, "polarity", SEQ)
  task = get_task(TaskConfig(task="polarity", max_seq_length=SEQ))
  examples = task.read_examples("", "dev")
  dev = sets["dev"]
  assert dev["texts"] == [e.text_a for e in examples] and not sets["regression"]
  np.testing.assert_array_equal(dev["labels"], [task.label_names.index(e.label) for e in examples])
  tok = vocab.tokenizer
  for i, pieces in enumerate(tok.encode(dev["texts"][:5])):
    bert = [vocab.cls_id] + pieces[:SEQ - 2] + [vocab.sep_id]
    gpt = [tok.start_id] + pieces[:SEQ - 2] + [tok.extract_id]
    assert dev["bert"]["input_word_ids"][i].tolist() == bert + [0] * (SEQ - len(bert))
    assert dev["gpt"]["input_word_ids"][i].tolist() == gpt + [tok.pad_id] * (SEQ - len(gpt))


def test_bert_instances_keep_the_unmasked_ids(vocab):
  docs = study_data.tokenize_documents(vocab, study_data.read_documents(["lee_background"])[:8])
  instances = study_data.bert_instances(vocab, docs, SEQ, seed=0, dupe_factor=1)
  assert len(instances["input_ids"]) > 4
  changed = 0
  for r in range(len(instances["input_ids"])):
    original, inputs = instances["original_ids"][r], instances["input_ids"][r]
    real = instances["masked_lm_weights"][r] > 0
    positions = instances["masked_lm_positions"][r][real]
    np.testing.assert_array_equal(original[positions], instances["masked_lm_ids"][r][real])
    unmasked = inputs.copy()
    unmasked[positions] = original[positions]  # every other position is the input as it is
    np.testing.assert_array_equal(original, unmasked)
    changed += int((original[positions] != inputs[positions]).sum())
  assert changed > 0  # the inputs were masked, so original_ids carries real information
