"""Property tests for the readers that raised other exceptions before (docs/RELIABILITY.md, fixed
bugs 1-4, 10, 11): fed noise, deep nesting or near-valid files whose values have random JSON types,
read_squad, read_swag, read_jsonl, the config JSON readers and the checkpoint config mappings either
accept the input or raise a one-line UserError, never another exception.

  pytest tests/reliability/test_fuzz_json_readers.py --hypothesis-show-statistics
"""

import csv
import io
import json

from hypothesis import example, given
from hypothesis import strategies as st

from tests.reliability import bad_inputs as B

FUZZ = B.fuzz_settings()

DEEP = b"[" * 50000
text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 70), st.floats(allow_nan=True),
                    text)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)), max_leaves=8)
noise = st.one_of(st.binary(max_size=2000),
                  st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")))


def _either(valid):
  """Mostly the right type, sometimes any JSON value."""
  return st.one_of(valid, valid, json_values)


def _dumps(value) -> bytes:
  return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


# --- SQuAD ----------------------------------------------------------------------------------------

CONTEXT = "the film was good and the plot was bad"
answers = st.lists(_either(st.fixed_dictionaries(
    {"text": _either(st.sampled_from(["good", "plot", "", " ", "the film"])),
     "answer_start": _either(st.integers(-2, len(CONTEXT) + 2))})), max_size=2)
questions = st.lists(_either(st.fixed_dictionaries(
    {"id": _either(text), "question": _either(text), "answers": _either(answers)},
    optional={"is_impossible": json_values})), max_size=3)
paragraphs = st.lists(_either(st.fixed_dictionaries(
    {"context": _either(st.sampled_from([CONTEXT, "", "  x  "])), "qas": _either(questions)})),
    max_size=2)
squad_files = st.fixed_dictionaries(
    {"data": _either(st.lists(_either(st.fixed_dictionaries({"paragraphs": _either(paragraphs)})),
                              max_size=2))}).map(_dumps)


@FUZZ
@given(data=st.one_of(noise, squad_files), training=st.booleans(), version_2=st.booleans())
@example(data=DEEP, training=True, version_2=False)
@example(data=b'{"data": [{"paragraphs": [{"context": "\xff", "qas": []}]}]}', training=True,
         version_2=True)
def test_read_squad(data, training, version_2):
  from bert_keras.tasks.squad import read_squad
  examples = B.with_file("train-v2.0.json", data, lambda _, p: B.reads_or_user_error(
      lambda: read_squad(p, training=training, version_2=version_2)))
  for e in examples or []:
    assert isinstance(e.qas_id, str) and isinstance(e.question_text, str)
    assert all(isinstance(a, str) for a in e.answers)


# --- SWAG -----------------------------------------------------------------------------------------

HEADER = ["", "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", "ending0",
          "ending1", "ending2", "ending3", "label"]
cells = st.one_of(text, st.sampled_from(['"', '""', '"a,b"', "\n", "0", "3", "9"]))


def _csv(rows) -> bytes:
  out = io.StringIO()
  writer = csv.writer(out)
  writer.writerow(HEADER)
  for row in rows:  # half of the rows unquoted: stray quotes and newlines break them
    if len(row) % 2:
      out.write(",".join(row) + "\n")
    else:
      writer.writerow(row)
  return out.getvalue().encode("utf-8", "surrogatepass")


swag_files = st.lists(st.lists(cells, min_size=10, max_size=13), max_size=6).map(_csv)


@FUZZ
@given(data=st.one_of(noise, swag_files), require_label=st.booleans())
@example(data=_csv([["1", "v", "0", '"' + "a" * 140000]]), require_label=True)
@example(data=b"," * 11 + b"label\n\xff\n", require_label=False)
def test_read_swag(data, require_label):
  from bert_keras.tasks.swag import read_swag
  examples = B.with_file("val.csv", data, lambda _, p: B.reads_or_user_error(
      lambda: read_swag(p, require_label=require_label)))
  for e in examples or []:
    assert len(e.endings) == 4 and (e.label is None or 0 <= e.label <= 3)


# --- predict's JSON lines -------------------------------------------------------------------------

jsonl_files = st.lists(st.one_of(json_values.map(_dumps), noise, st.just(DEEP)), max_size=5).map(
    b"\n".join)


@FUZZ
@given(data=st.one_of(noise, jsonl_files))
def test_read_jsonl(data):
  from bert_keras.export.saved_model_predictor import read_jsonl
  records = B.with_file("in.jsonl", data, lambda _, p: B.reads_or_user_error(lambda: read_jsonl(p)))
  assert records is None or all(isinstance(n, int) and n >= 1 and isinstance(r, dict)
                                for n, r in records)


# --- configs --------------------------------------------------------------------------------------

MODEL_KEYS = ["vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
              "hidden_act", "dropout_rate", "attention_dropout_rate", "max_position_embeddings",
              "type_vocab_size", "initializer_range", "layer_norm_epsilon", "attention"]
TRAINING_KEYS = ["model", "max_seq_length", "num_train_steps", "learning_rate", "objective",
                 "special_token_ids", "model_overrides", "phase", "phase1_fraction", "dynamic_masking",
                 "train_batch_size", "gradient_accumulation_steps", "masked_lm_prob"]
usual = {"model": st.sampled_from(["bert_tiny", "bert_mini"]),
         "objective": st.sampled_from(["mlm", "ltr", "mlm_nsp"]),
         "hidden_act": st.sampled_from(["gelu", "relu"]),
         "attention": st.sampled_from(["bidirectional", "causal"]),
         "model_overrides": st.dictionaries(st.sampled_from(MODEL_KEYS), json_values, max_size=2),
         "special_token_ids": st.lists(st.integers(0, 5), max_size=3)}


def _config_dicts(keys):
  values = {k: _either(usual.get(k, st.one_of(st.integers(0, 200), st.floats(0, 1)))) for k in keys}
  return st.fixed_dictionaries({}, optional=values)


@FUZZ
@given(data=st.one_of(noise, _config_dicts(MODEL_KEYS).map(_dumps),
                      _config_dicts(TRAINING_KEYS).map(_dumps)))
@example(data=DEEP)
def test_config_json_files(data):
  from bert_keras.configs.model import ModelConfig
  from bert_keras.configs.training import TrainingConfig
  for load in (ModelConfig.from_file, TrainingConfig.from_file):
    B.with_file("config.json", data, lambda _, p: B.reads_or_user_error(lambda: load(p)))


CHECKPOINT_KEYS = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                   "intermediate_size", "hidden_act", "hidden_dropout_prob",
                   "attention_probs_dropout_prob", "max_position_embeddings", "type_vocab_size",
                   "initializer_range", "layer_norm_eps", "model_type", "position_embedding_type"]


@FUZZ
@given(values=st.fixed_dictionaries(
    {"vocab_size": _either(st.integers(1, 50)), "hidden_size": _either(st.sampled_from([8, 16])),
     "num_hidden_layers": _either(st.integers(1, 2)), "num_attention_heads": _either(st.just(2)),
     "intermediate_size": _either(st.integers(1, 32))},
    optional={k: json_values for k in CHECKPOINT_KEYS[5:]}))
def test_checkpoint_config_mappings(values):
  from bert_keras.interop.google_checkpoint import config_from_google
  from bert_keras.interop.hf_checkpoint import config_from_hf
  for convert in (config_from_google, config_from_hf):
    config = B.reads_or_user_error(lambda: convert(dict(values), "config.json"))
    assert config is None or config.hidden_size % config.num_heads == 0
