"""GLUE readers on small files in the official TSV layouts, the embedded real sets, and the model a
sentence (pair) classification task builds for each approach."""

import os

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_feature_classifier import BertFeatureClassifier
from bert_keras.tasks.registry import get_task, task_names
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from bert_keras.configs.tasks import TASK_PRESETS, get_task_config

# (folder, header, rows); each row is the official column order. Each row's label differs from the
# cells of the other columns that could pass for one (an id, an annotator's label), so a reader
# taking the wrong column reads a wrong label or fails.
GLUE_FILES = {
    "glue/cola": ("CoLA", None, [["gj04", "1", "", "Our friends won't buy this analysis."],
                                 ["gj04", "0", "*", "They drank the pub."]]),
    "glue/sst2": ("SST-2", ["sentence", "label"], [["a gorgeous film ", "1"], ["dull", "0"]]),
    "glue/mrpc": ("MRPC", ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                  [["1", "702876", "702977", "He said \"yes\".", "He agreed."],
                   ["0", "2108705", "2108831", "Á", "B"]]),
    "glue/stsb": ("STS-B", ["index", "genre", "filename", "year", "old_index", "source1",
                            "source2", "sentence1", "sentence2", "score"],
                  [["0", "main-captions", "MSRvid", "2012test", "0001", "none", "none",
                    "A plane is taking off.", "An air plane is taking off.", "5.000"],
                   ["1", "main-captions", "MSRvid", "2012test", "0004", "none", "none",
                    "A man plays a flute.", "A man slices bread.", "0.500"]]),
    "glue/qqp": ("QQP", ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
                 [["1", "3", "4", "How?", "Why?", "0"], ["0", "1", "2", "Who?", "Who is?", "1"]]),
    "glue/mnli": ("MNLI", ["index", "promptID", "pairID", "genre", "s1_bin", "s2_bin", "s1_parse",
                           "s2_parse", "sentence1", "sentence2", "label1", "gold_label"],
                  [["0", "1", "1e", "gov", "(", "(", "(", "(", "It rains.", "It is wet.",
                    "entailment", "entailment"],
                   ["1", "2", "2n", "gov", "(", "(", "(", "(", "It rains.", "It is dry.",
                    "neutral", "contradiction"],
                   ["2", "3", "3n", "gov", "(", "(", "(", "(", "It rains.", "I sing.",
                    "neutral", "neutral"]]),
    "glue/qnli": ("QNLI", ["index", "question", "sentence", "label"],
                  [["0", "Who?", "Me.", "entailment"], ["1", "Why?", "No.", "not_entailment"]]),
    "glue/rte": ("RTE", ["index", "sentence1", "sentence2", "label"],
                 [["0", "A b.", "A.", "entailment"], ["1", "C.", "D.", "not_entailment"]]),
    "glue/wnli": ("WNLI", ["index", "sentence1", "sentence2", "label"],
                  [["0", "I saw it.", "It was seen.", "1"], ["1", "X.", "Y.", "0"]]),
}


# (text_a, text_b, label) columns by the official header's names (CoLA has no header: indices).
OFFICIAL_COLUMNS = {
    "glue/cola": (3, None, 1),
    "glue/sst2": ("sentence", None, "label"),
    "glue/mrpc": ("#1 String", "#2 String", "Quality"),
    "glue/stsb": ("sentence1", "sentence2", "score"),
    "glue/qqp": ("question1", "question2", "is_duplicate"),
    "glue/mnli": ("sentence1", "sentence2", "gold_label"),
    "glue/qnli": ("question", "sentence", "label"),
    "glue/rte": ("sentence1", "sentence2", "label"),
    "glue/wnli": ("sentence1", "sentence2", "label"),
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
  text_a, text_b, label = (header.index(c) if header and c else c for c in OFFICIAL_COLUMNS[name])
  assert task.is_regression == (name == "glue/stsb")
  expected = [(r[text_a], None if text_b is None else r[text_b],
               float(r[label]) if task.is_regression else r[label]) for r in rows]
  for split in (task.train_split,) + task.eval_splits:
    examples = task.read_examples(data_dir, split)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == expected


# Each task's dev metrics as GLUE defines them, for every example predicted as the last label
# (STS-B: the scores reversed), on the leaderboard's 0-100 scale (correlations x 100 too). A
# constant predictor has Matthews correlation 0 whatever its accuracy.
OFFICIAL_METRICS = {
    "glue/cola": {"matthews_corrcoef": 0.0},
    "glue/sst2": {"accuracy": 50.0},
    "glue/mrpc": {"f1": 200 / 3, "accuracy": 50.0},
    "glue/stsb": {"pearson": -100.0, "spearman": -100.0},
    "glue/qqp": {"f1": 200 / 3, "accuracy": 50.0},
    "glue/mnli": {"accuracy": 100 / 3},
    "glue/qnli": {"accuracy": 50.0},
    "glue/rte": {"accuracy": 50.0},
    "glue/wnli": {"accuracy": 50.0},
}


@pytest.mark.parametrize("name", sorted(GLUE_FILES))
def test_glue_metrics_are_the_official_ones(tmp_path, name):
  task = get_task(get_task_config(name))
  examples = task.read_examples(write_glue(str(tmp_path), name), task.eval_splits[0])
  if task.is_regression:
    predicted = [e.label for e in reversed(examples)]
  else:
    predicted = [task.label_names[-1]] * len(examples)
  scores = task.evaluate(examples, [{"prediction": p} for p in predicted])
  assert scores == pytest.approx(OFFICIAL_METRICS[name])


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


@pytest.mark.parametrize("task_name, num_classes", [("polarity", 2), ("lee_similarity", 1)])
@pytest.mark.parametrize("approach", ["fine_tuning", "feature_based"])
def test_classification_model_follows_the_approach(task_name, num_classes, approach):
  """fine_tuning: a dense layer on [CLS] over the trainable encoder; feature_based (section 5.3):
  a BiLSTM classifier over the chosen layers of the frozen encoder (fields a fine-tuning config
  does not take)."""
  encoder = BertEncoder.from_model_config(get_model_config("bert_tiny", vocab_size=64))
  features = dict(feature_layers=(-1,), lstm_units=8) if approach == "feature_based" else {}
  task = get_task(get_task_config(task_name, approach=approach, **features))
  model = task.build_model(encoder)
  assert model.output["logits"].shape[-1] == num_classes and model.encoder is encoder
  if approach == "feature_based":
    assert type(model) is BertFeatureClassifier  # pylint: disable=unidiomatic-typecheck
    assert (model.feature_layers, model.lstm_units, encoder.trainable) == ([-1], 8, False)
  else:
    assert encoder.trainable
    assert type(model) is BertClassifier  # pylint: disable=unidiomatic-typecheck


@pytest.mark.parametrize("name", sorted(GLUE_FILES))
def test_a_row_with_an_extra_tab_is_refused(tmp_path, name):
  """A stray tab inside a sentence shifts the columns; before, the row was read as a wrong pair."""
  data_dir = write_glue(str(tmp_path), name)
  _, header, rows = GLUE_FILES[name]
  expected = len(header or rows[0])
  path = os.path.join(data_dir, "train.tsv")
  with open(path, "a", encoding="utf-8") as f:
    cells = list(rows[0])
    cells[-2] = "a sentence with a\tstray tab"
    f.write("\t".join(cells) + "\n")
  line = len(rows) + (2 if header else 1)
  task = get_task(get_task_config(name))
  with pytest.raises(UserError, match=rf"train\.tsv:{line}: {expected + 1} tab-separated columns; "
                                      rf"expected {expected}"):
    task.read_examples(data_dir, "train")
