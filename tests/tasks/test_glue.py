"""GLUE readers on small files in the official TSV layouts, and the embedded real sets."""

import os

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks.registry import get_task, task_names
from bert_keras.text.bert_tokenizer import BertTokenizer
from configs.tasks import TASK_PRESETS, get_task_config

# (folder, file, header, rows); each row is the official column order.
GLUE_FILES = {
    "glue/cola": ("CoLA", None, [["gj04", "1", "", "Our friends won't buy this analysis."],
                                 ["gj04", "0", "*", "They drank the pub."]]),
    "glue/sst2": ("SST-2", ["sentence", "label"], [["a gorgeous film ", "1"], ["dull", "0"]]),
    "glue/mrpc": ("MRPC", ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                  [["1", "1", "2", "He said \"yes\".", "He agreed."], ["0", "3", "4", "Á", "B"]]),
    "glue/stsb": ("STS-B", ["index", "genre", "filename", "year", "old_index", "source1",
                            "source2", "sentence1", "sentence2", "score"],
                  [["0", "main-captions", "MSRvid", "2012test", "0001", "none", "none",
                    "A plane is taking off.", "An air plane is taking off.", "5.000"],
                   ["1", "main-captions", "MSRvid", "2012test", "0004", "none", "none",
                    "A man plays a flute.", "A man slices bread.", "0.500"]]),
    "glue/qqp": ("QQP", ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
                 [["0", "1", "2", "How?", "Why?", "0"], ["1", "3", "4", "Who?", "Who is?", "1"]]),
    "glue/mnli": ("MNLI", ["index", "promptID", "pairID", "genre", "s1_bin", "s2_bin", "s1_parse",
                           "s2_parse", "sentence1", "sentence2", "label1", "gold_label"],
                  [["0", "1", "1e", "gov", "(", "(", "(", "(", "It rains.", "It is wet.",
                    "entailment", "entailment"],
                   ["1", "2", "2n", "gov", "(", "(", "(", "(", "It rains.", "It is dry.",
                    "contradiction", "contradiction"],
                   ["2", "3", "3n", "gov", "(", "(", "(", "(", "It rains.", "I sing.",
                    "neutral", "neutral"]]),
    "glue/qnli": ("QNLI", ["index", "question", "sentence", "label"],
                  [["0", "Who?", "Me.", "entailment"], ["1", "Why?", "No.", "not_entailment"]]),
    "glue/rte": ("RTE", ["index", "sentence1", "sentence2", "label"],
                 [["0", "A b.", "A.", "entailment"], ["1", "C.", "D.", "not_entailment"]]),
    "glue/wnli": ("WNLI", ["index", "sentence1", "sentence2", "label"],
                  [["0", "I saw it.", "It was seen.", "1"], ["1", "X.", "Y.", "0"]]),
}


def write_glue(root, task):
  folder, header, rows = GLUE_FILES[task]
  path = os.path.join(root, folder)
  os.makedirs(path, exist_ok=True)
  files = ["dev_matched", "dev_mismatched", "train"] if task == "glue/mnli" else ["dev", "train"]
  for split in files:
    lines = (["\t".join(header)] if header else []) + ["\t".join(r) for r in rows]
    with open(os.path.join(path, f"{split}.tsv"), "w", encoding="utf-8") as f:
      f.write("\n".join(lines) + "\n")
  return path


def test_every_preset_names_a_registered_task():
  names = set(task_names())
  assert {c.task for c in TASK_PRESETS.values()} <= names
  assert {f"glue/{t}" for t in ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte",
                                "wnli")} <= names


@pytest.mark.parametrize("name", sorted(GLUE_FILES))
def test_glue_readers_follow_official_columns(tmp_path, name):
  data_dir = write_glue(str(tmp_path), name)
  task = get_task(get_task_config(name))
  _, header, rows = GLUE_FILES[name]
  for split in (task.train_split,) + task.eval_splits:
    examples = task.read_examples(data_dir, split)
    assert len(examples) == len(rows)
  first = task.read_examples(data_dir, "train")[0]
  column_a = {"glue/cola": 3, "glue/sst2": 0, "glue/mrpc": 3, "glue/stsb": 7, "glue/qqp": 3,
              "glue/mnli": 8, "glue/qnli": 1, "glue/rte": 1, "glue/wnli": 1}[name]
  expected_a = rows[0][column_a]
  assert first.text_a == expected_a
  assert (first.text_b is not None) == task.is_pair
  if name == "glue/stsb":
    assert first.label == 5.0 and task.is_regression
  else:
    assert first.label in task.label_names


def test_glue_errors_name_file_and_line(tmp_path):
  data_dir = write_glue(str(tmp_path), "glue/rte")
  task = get_task(get_task_config("glue/rte"))
  path = os.path.join(data_dir, "train.tsv")
  with open(path, "a", encoding="utf-8") as f:
    f.write("2\tonly two\n")
  with pytest.raises(UserError, match=r"RTE/train\.tsv:4: 2 tab-separated columns"):
    task.read_examples(data_dir, "train")
  with open(path, "w", encoding="utf-8") as f:
    f.write("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tmaybe\n")
  with pytest.raises(UserError, match=r"train\.tsv:2: label 'maybe' is not one of"):
    task.read_examples(data_dir, "train")


def test_label_sets_must_agree():
  task = get_task(get_task_config("polarity"))
  train = task.read_examples("", "train")
  neg_only = [e for e in train if e.label == "neg"]
  with pytest.raises(UserError, match=r"\['pos'\] never occur in train"):
    task.prepare_labels(neg_only, {"dev": task.read_examples("", "dev")})


def test_polarity_split_is_deterministic_and_balanced():
  task = get_task(get_task_config("polarity"))
  train, dev = task.read_examples("", "train"), task.read_examples("", "dev")
  assert (len(train), len(dev)) == (160, 40)
  assert sum(e.label == "pos" for e in dev) == 20
  assert not {e.guid for e in train} & {e.guid for e in dev}
  assert [e.guid for e in dev] == [e.guid for e in task.read_examples("", "dev")]
  # The file is Windows-1252: the em dash and accents decode as such.
  assert any("—" in e.text_a for e in train + dev)


def test_lee_similarity_pairs():
  task = get_task(get_task_config("lee_similarity"))
  train, dev = task.read_examples("", "train"), task.read_examples("", "dev")
  assert (len(train), len(dev)) == (980, 245)
  assert task.is_regression and all(0.0 <= e.label <= 1.0 for e in train)
  first = train[0]
  assert first.guid == "0-1" and first.label == pytest.approx(0.3)


def test_pair_features_pack_two_segments():
  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  task = get_task(get_task_config("glue/mrpc", max_seq_length=16))
  from bert_keras.tasks.classification_task import ClassificationExample
  examples = [ClassificationExample("x", "hello world", "good morning to you all " * 3, "1")]
  features = task.make_features(examples, tokenizer, training=True)
  ids = features.inputs["input_word_ids"][0]
  types = features.inputs["input_type_ids"][0]
  assert ids[0] == tokenizer.cls_id and list(ids).count(tokenizer.sep_id) == 2
  # The longer segment B is truncated first: A keeps both pieces.
  assert list(ids[1:3]) == tokenizer.encode(["hello world"])[0]
  assert features.inputs["input_mask"][0].sum() == 16 and types[3] == 0 and types[4] == 1
  assert features.labels["logits"].tolist() == [1]
