import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_export import export_text_model
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.tasks.registry import get_task
from bert_keras.configs.model import get_model_config
from bert_keras.configs.tasks import TaskConfig
from tests.export.fresh_process import run_without_project


@pytest.fixture(scope="module")
def tokenizer():
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    texts = f.read().splitlines()
  return GPTTokenizer(model_proto=train_bpe_model(texts, vocab_size=1000))


def test_special_tokens_and_vocab(tokenizer):
  assert tokenizer.vocab_size == 1000
  assert (tokenizer.pad_id, tokenizer.unk_id) == (0, 1)
  assert (tokenizer.start_id, tokenizer.delimiter_id, tokenizer.extract_id) == (2, 3, 4)
  assert tokenizer.id_to_token(tokenizer.extract_id) == "<extract>"
  # BPE merges are learned: frequent words of the news corpus are single pieces.
  assert len(tokenizer.encode(["the government"])[0]) == 2


def test_in_graph_matches_python_and_lowercases(tokenizer):
  texts = ["The Government said on Tuesday.", "Ünïcödé and <extract> text", ""]
  ragged = tokenizer.tokenize(tf.constant(texts))
  assert ragged.to_list() == tokenizer.encode(texts)
  assert tokenizer.encode(["THE"]) == tokenizer.encode(["the"])
  # A literal special-token string in user text never becomes the special id.
  assert tokenizer.extract_id not in ragged.to_list()[1]
  assert tokenizer.decode(tokenizer.encode(["the government said"])[0]) == "the government said"


def test_config_and_file_round_trip(tokenizer, tmp_path):
  clone = GPTTokenizer.from_config(tokenizer.get_config())
  assert clone.encode(["police said"]) == tokenizer.encode(["police said"])
  path = os.path.join(str(tmp_path), "bpe.model")
  tokenizer.save_model(path)
  assert GPTTokenizer(model_path=path).vocabulary == tokenizer.vocabulary


def test_errors(tmp_path):
  with pytest.raises(UserError, match="no such SentencePiece model file"):
    GPTTokenizer(model_path=str(tmp_path / "missing.model"))
  bad = tmp_path / "bad.model"
  bad.write_bytes(b"not a model")
  with pytest.raises(UserError, match="bad.model: not a SentencePiece model"):
    GPTTokenizer(model_path=str(bad))
  with pytest.raises(UserError, match="no text"):
    train_bpe_model(["", "  "], vocab_size=100)
  with pytest.raises(UserError, match="vocab_size=50000"):
    train_bpe_model(["a few words only"], vocab_size=50000)


_LOAD_GPT = """
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    path, premises, hypotheses = pickle.load(open(sys.argv[1], "rb"))
    serve = tf.saved_model.load(path).signatures["serving_default"]
    logits = serve(text_a=tf.constant(premises), text_b=tf.constant(hypotheses))["logits"]
    pickle.dump(dict(logits=logits.numpy(), project=project_modules()), open(sys.argv[2], "wb"))
"""


def test_saved_model_tokenizes_raw_text(tokenizer, tmp_path):
  """The export path (gpt_export.export_text_model): strings in, BPE and the entailment layout
  in-graph, no tokenizer file beside the SavedModel. Loaded in a fresh process that cannot import
  this project, its logits are the model's on the ids packed in Python."""
  seq = 16
  task = get_task(TaskConfig(task="gpt/glue/rte", max_seq_length=seq, dropout_rate=0.0))
  task.label_names = ["entailment", "not_entailment"]
  keras.utils.set_random_seed(5)
  model = task.build_model(GPTDecoder.from_model_config(get_model_config(
      "gpt_nano", vocab_size=tokenizer.vocab_size, max_position_embeddings=seq,
      dropout_rate=0.0, attention_dropout_rate=0.0)))
  path = str(tmp_path / "export")
  export_text_model(model, tokenizer, task, path)
  assert not [name for name in os.listdir(path) if name.endswith(".model")]
  premises, hypotheses = ["the police said", "", "Ünïcödé news"], ["officers spoke", "a", ""]
  (tmp_path / "fresh").mkdir()
  loaded = run_without_project(_LOAD_GPT, (path, premises, hypotheses), tmp_path / "fresh")
  assert loaded["project"] == []
  ids = np.full((len(premises), seq), tokenizer.pad_id, np.int32)
  mask = np.zeros_like(ids)
  for row, (a, b) in enumerate(zip(tokenizer.encode(premises), tokenizer.encode(hypotheses))):
    packed = [tokenizer.start_id] + a + [tokenizer.delimiter_id] + b + [tokenizer.extract_id]
    assert len(packed) <= seq
    ids[row, :len(packed)], mask[row, :len(packed)] = packed, 1
  expected = model({"input_word_ids": ids, "input_mask": mask}, training=False)["logits"]
  np.testing.assert_allclose(loaded["logits"], np.asarray(expected), rtol=1e-4, atol=1e-5)
