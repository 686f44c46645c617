import numpy as np
import pytest

from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_task_model import GPTTaskModel
from tests.models import harness

TINY = dict(vocab_size=40, hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
            dropout_rate=0.0, attention_dropout_rate=0.0, max_position_embeddings=16)
EXTRACT = 4


def _grouped(shape, seed=0):
  rng = np.random.default_rng(seed)
  ids = rng.integers(5, 40, size=shape).astype("int32")
  lengths = rng.integers(3, shape[-1] + 1, size=shape[:-1])
  mask = (np.arange(shape[-1]) < lengths[..., None]).astype("int32")
  ids = np.where(mask == 1, ids, 0)
  np.put_along_axis(ids, (lengths - 1)[..., None], EXTRACT, axis=-1)
  return {"input_word_ids": ids, "input_mask": mask}


def test_classification_reads_extract_token_state():
  decoder = GPTDecoder(**TINY)
  model = GPTTaskModel(decoder, "classification", num_outputs=3, with_lm_logits=False)
  inputs = _grouped((4, 10))
  logits = np.asarray(model(inputs)["logits"])
  states = np.asarray(decoder(inputs)["sequence_output"])
  last = inputs["input_mask"].sum(1) - 1
  kernel, bias = (np.asarray(w) for w in model.classifier.weights)
  expected = states[np.arange(4), last] @ kernel + bias
  np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)
  # Padding after the extract token changes nothing.
  padded = {k: np.pad(v, ((0, 0), (0, 4))) for k, v in inputs.items()}
  np.testing.assert_allclose(np.asarray(model(padded)["logits"]), logits, atol=1e-5)


def test_similarity_is_symmetric_sum_of_orders():
  decoder = GPTDecoder(**TINY)
  model = GPTTaskModel(decoder, "similarity", num_outputs=1)
  inputs = _grouped((3, 2, 9))
  out = model(inputs)
  swapped = {k: v[:, ::-1].copy() for k, v in inputs.items()}
  np.testing.assert_allclose(np.asarray(model(swapped)["logits"]), np.asarray(out["logits"]),
                             rtol=1e-4, atol=1e-5)
  assert out["logits"].shape == (3, 1) and out["lm_logits"].shape == (3, 2, 9, 40)


def test_multiple_choice_scores_each_answer():
  decoder = GPTDecoder(**TINY)
  model = GPTTaskModel(decoder, "multiple_choice")
  inputs = _grouped((2, 4, 8))
  logits = np.asarray(model(inputs)["logits"])
  assert logits.shape == (2, 4)
  # Each answer's score depends only on its own sequence: permuting answers permutes scores.
  perm = [2, 0, 3, 1]
  permuted = {k: v[:, perm] for k, v in inputs.items()}
  np.testing.assert_allclose(np.asarray(model(permuted)["logits"]), logits[:, perm], atol=1e-5)


@pytest.mark.parametrize("task_type,shape", [("classification", (2, 8)),
                                             ("similarity", (2, 2, 8)),
                                             ("multiple_choice", (2, 3, 8))])
def test_save_load(tmp_path, task_type, shape):
  model = GPTTaskModel(GPTDecoder(**TINY), task_type, num_outputs=2)
  harness.assert_save_load_round_trip(model, _grouped(shape), tmp_path, "logits")


def test_task_type_validation():
  with pytest.raises(ValueError, match="task_type='regression'"):
    GPTTaskModel(GPTDecoder(**TINY), "regression")
