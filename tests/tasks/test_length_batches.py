"""Batches of similar length for fine-tuning and evaluation, on the real polarity sentences:
every example comes out exactly once, each batch cut to one of the fixed bucket lengths with
nothing real cut off; predictions in length order equal model.predict on fixed padding, and every
task kind's post-processed predictions (SQuAD windows, CoNLL tags, SWAG choices) are those of
fixed padding in the input order."""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.tasks import length_batches
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.polarity import PolarityTask
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from bert_keras.configs.tasks import get_task_config
from bert_keras.configs.base import ConfigError
from bert_keras.configs.finetuning import RunConfig
from bert_keras.errors import UserError

BUCKETS = (16, 32, 64)


@pytest.fixture(scope="module")
def tokenizer():
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


@pytest.fixture(scope="module")
def features(tokenizer):
  task = PolarityTask(get_task_config("polarity", max_seq_length=64))
  examples = task.read_examples("", "train")
  return task.make_features(examples, tokenizer, training=True)


def _rows(batch):
  """The examples of a batch, each as its id tuple without padding."""
  return [tuple(int(t) for t, m in zip(ids, mask) if m)
          for ids, mask in zip(batch["input_word_ids"].numpy(), batch["input_mask"].numpy())]


def test_grouped_batches_yield_every_example_once_at_a_bucket_length(features):
  lengths = length_batches.example_lengths(features.inputs)
  assert lengths.min() < 16 and 32 < lengths.max() <= 64  # real sentences span the buckets
  # A per-position label (as tagging has) is cut with the inputs.
  labels = {"logits": features.labels["logits"], "tags": features.inputs["input_word_ids"]}
  ds = tf.data.Dataset.from_tensor_slices((features.inputs, labels))
  seen, widths = collections.Counter(), collections.Counter()
  for x, y in length_batches.grouped_batches(ds, 8, BUCKETS):
    width = x["input_word_ids"].shape[1]
    assert width in BUCKETS
    real = x["input_mask"].numpy().sum(1)
    assert real.max() <= width  # nothing real cut
    assert width == 16 or real.max() > BUCKETS[BUCKETS.index(width) - 1]  # the smallest fit
    np.testing.assert_array_equal(y["tags"], x["input_word_ids"])
    seen.update(zip(_rows(x), y["logits"].numpy().tolist()))
    widths[width] += 1
  expected = collections.Counter(zip(_rows({k: tf.constant(v) for k, v in
                                            features.inputs.items()}),
                                     features.labels["logits"].tolist()))
  assert seen == expected
  assert len(widths) == 3


def test_train_batches_are_full_shuffled_and_from_the_boundary_set(features):
  ds = length_batches.train_batches(features.inputs, features.labels, 8, seed=0, buckets=BUCKETS)
  batches = list(ds.take(60))
  assert all(x["input_word_ids"].shape[0] == 8 for x, _ in batches)
  widths = [x["input_word_ids"].shape[1] for x, _ in batches]
  assert set(widths) == set(BUCKETS)
  assert widths != sorted(widths)  # buckets interleave
  fixed = length_batches.train_batches(features.inputs, features.labels, 8, seed=0,
                                       buckets=(64,))
  assert {x["input_word_ids"].shape[1] for x, _ in fixed.take(5)} == {64}


def test_predict_by_length_equals_fixed_padding(features, tokenizer):
  keras.utils.set_random_seed(0)
  encoder = BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=tokenizer.vocab_size, num_layers=1))
  inputs = {name: value[:40] for name, value in features.inputs.items()}
  for model in (BertClassifier(encoder, 2, dropout_rate=0.0),
                BertTokenClassifier(encoder, 3, dropout_rate=0.0)):
    fixed = model.predict(inputs, batch_size=16, verbose=0)["logits"]
    bucketed = length_batches.predict(model, inputs, 16, BUCKETS)["logits"]
    assert bucketed.shape == fixed.shape
    if fixed.ndim == 3:  # per position: equal on the real tokens
      real = inputs["input_mask"] > 0
      np.testing.assert_allclose(bucketed[real], fixed[real], atol=2e-5)
      assert (bucketed[~real] < -1e8).any()  # padding past a batch's bucket never ran
      assert not (bucketed[real] < -1e8).any()
    else:
      np.testing.assert_allclose(bucketed, fixed, atol=2e-5)


# --- Every task kind's post-processing: bucketed equals fixed padding, in the input order --------

def _long_conll_sentence():
  words = [f"word{i}" for i in range(20)]  # ~40 pieces: past the 16 bucket
  return "\n".join(f"{w} NN I-NP {'I-PER' if i == 3 else 'O'}" for i, w in enumerate(words))


def _squad(tmp_path):
  from bert_keras.tasks.squad import SquadV1Task
  from . import task_fixtures as fx
  # LONG spans several windows (the last one shorter); its question comes third.
  task = SquadV1Task(get_task_config("squad_v1", max_seq_length=48, doc_stride=16,
                                     max_query_length=12))
  return task, task.read_examples(fx.write_json(tmp_path, "dev-v1.1.json", fx.SQUAD_V1), "dev")


def _conll(tmp_path):
  from bert_keras.tasks.conll2003 import Conll2003Task
  from . import task_fixtures as fx
  text = fx.CONLL.replace("-DOCSTART- -X- -X- O\n\n",
                          "-DOCSTART- -X- -X- O\n\n" + _long_conll_sentence() + "\n\n", 1)
  task = Conll2003Task(get_task_config("conll2003", max_seq_length=64))
  examples = task.read_examples(fx.write_conll(tmp_path, train=text, dev=text), "dev")
  task.prepare_labels(examples, {})
  return task, examples


def _swag(tmp_path):
  from bert_keras.tasks.swag import SwagTask
  from . import task_fixtures as fx
  long_row = ["2", "lsmdc9", "3", "x", "A woman in a long red coat walks slowly across the busy "
              "market square at dawn.", "She", "gold", "stops to buy fresh bread and cheese.",
              "sings.", "sits.", "waves at the baker across the road.", "0"]
  fx.write_swag(tmp_path / "val.csv", rows=[long_row] + fx.SWAG_ROWS)
  task = SwagTask(get_task_config("swag", max_seq_length=40))
  return task, task.read_examples(str(tmp_path), "dev")


def _same(bucketed, fixed, path="predictions"):
  """Equal structures: strings, ints and lists exactly (texts, tags, labels), floats to 1e-4."""
  if isinstance(fixed, dict):
    assert list(bucketed) == list(fixed), path
    for key in fixed:
      _same(bucketed[key], fixed[key], f"{path}[{key!r}]")
  elif isinstance(fixed, (list, tuple)):
    assert len(bucketed) == len(fixed), path
    for i, (b, f) in enumerate(zip(bucketed, fixed)):
      _same(b, f, f"{path}[{i}]")
  elif isinstance(fixed, float):
    assert bucketed == pytest.approx(fixed, abs=1e-4), path
  else:
    assert bucketed == fixed, path


@pytest.mark.parametrize("make_task", [_squad, _conll, _swag], ids=["squad", "conll", "swag"])
def test_task_predictions_in_length_buckets_equal_fixed_padding(make_task, tokenizer, tmp_path):
  """SQuAD's windows regrouped per question, CoNLL's first pieces and SWAG's choices: the
  post-processed predictions and the raw outputs of bucketed batches are those of fixed padding,
  in the input order (a random model gives every example its own values, so a row put back in the
  wrong place changes them)."""
  task, examples = make_task(tmp_path)
  features = task.make_features(examples, tokenizer, training=False)
  seq = task.config.max_seq_length
  buckets = length_batches.batch_lengths(seq)
  lengths = length_batches.example_lengths(features.inputs)
  widths = {next(b for b in buckets if b >= n) for n in lengths}
  assert len(widths) >= 2 and list(lengths) != sorted(lengths)  # reordered, several buckets
  keras.utils.set_random_seed(0)
  encoder = BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=tokenizer.vocab_size, num_layers=1, dropout_rate=0.0))
  model = task.build_model(encoder)
  fixed = length_batches.predict(model, features.inputs, 2, (seq,))
  bucketed = length_batches.predict(model, features.inputs, 2, buckets)
  real = features.inputs["input_mask"] > 0
  for name, value in fixed.items():
    if value.shape[1:] == real.shape[1:] + value.shape[real.ndim:]:  # per position
      np.testing.assert_allclose(bucketed[name][real], value[real], atol=2e-5, err_msg=name)
    else:
      np.testing.assert_allclose(bucketed[name], value, atol=2e-5, err_msg=name)
  _same(task.postprocess(examples, features, bucketed),
        task.postprocess(examples, features, fixed))


def test_bucket_settings_auto_fixed_or_chosen_lengths():
  """--length_buckets of run_finetuning takes the export's values; batch_lengths still reads earlier
  versions' booleans as auto / fixed, a RunConfig refuses them."""
  assert length_batches.batch_lengths(64) == (16, 24, 32, 48, 64)
  assert length_batches.batch_lengths(64, "fixed") == (64,)
  assert length_batches.batch_lengths(64, "16,32") == (16, 32, 64)
  assert length_batches.batch_lengths(64, False) == (64,)
  assert length_batches.batch_lengths(64, True) == (16, 24, 32, 48, 64)
  with pytest.raises(UserError,
                     match=r"^--length_buckets=\[16, 96\]: 96 exceeds max_seq_length=64$"):
    length_batches.batch_lengths(64, "16,96")
  assert RunConfig().length_buckets == "auto"
  with pytest.raises(ConfigError, match=r"^length_buckets=True must be a string"):
    RunConfig.from_dict({"length_buckets": True})  # earlier versions' boolean: no more
  assert RunConfig(length_buckets=" 16, 24").length_buckets == "16,24"
  with pytest.raises(ConfigError, match=r"length_buckets='16,x'; expected 'auto', 'fixed'"):
    RunConfig(length_buckets="16,x")
  with pytest.raises(ConfigError, match=r"length_buckets=\[32, 16\]: expected ascending"):
    RunConfig(length_buckets="32,16")
