import keras
import numpy as np
import pytest

from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_language_model import GPTLanguageModel, GPTLMHead
from bert_keras.configs.model import GPT_PRESETS, get_model_config
from bert_keras.configs.model import ConfigError
from tests.models import harness

TINY = dict(vocab_size=50, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64,
            dropout_rate=0.0, attention_dropout_rate=0.0, max_position_embeddings=32)


def _inputs(batch=2, seq=12, seed=0):
  inputs = harness.random_inputs(batch, seq, vocab_size=50, seed=seed)
  inputs.pop("input_type_ids")
  return inputs


def test_gpt1_preset_matches_paper():
  cfg = get_model_config("gpt1")
  assert (cfg.num_layers, cfg.hidden_size, cfg.num_heads, cfg.intermediate_size) == (12, 768, 12, 3072)
  assert cfg.attention == "causal" and cfg.type_vocab_size == 0 and cfg.max_position_embeddings == 512
  assert cfg.vocab_size == 40478 + 3 and cfg.hidden_act == "gelu_tanh"
  for name, preset in GPT_PRESETS.items():
    assert preset.attention == "causal", name
  with pytest.raises(ConfigError, match="unknown model preset 'gpt9'"):
    get_model_config("gpt9")


def test_gpt1_parameter_count():
  # 12 x (4H^2 + 2 * 4H^2 + biases and LayerNorms) + (vocab + positions) x H: ~116.5M with the
  # 40,481-entry vocabulary, matching the released model (117M quoted for GPT-1).
  model = GPTDecoder.from_model_config(get_model_config("gpt1"))
  assert abs(model.count_params() - 116.5e6) < 0.5e6, model.count_params()


def test_rejects_segments_and_bidirectional():
  with pytest.raises(ValueError, match="type_vocab_size=2"):
    GPTDecoder(**TINY, type_vocab_size=2)
  with pytest.raises(ValueError, match="attention='bidirectional'"):
    GPTDecoder(**TINY, attention="bidirectional")


def test_causal_no_future_leak():
  """Changing token j must not change any state at positions < j (the causal mask)."""
  model = GPTDecoder(**TINY)
  inputs = _inputs()
  changed = {k: v.copy() for k, v in inputs.items()}
  changed["input_word_ids"][:, 7] = (changed["input_word_ids"][:, 7] + 1) % 50
  a = np.asarray(model(inputs)["sequence_output"])
  b = np.asarray(model(changed)["sequence_output"])
  np.testing.assert_allclose(a[:, :7], b[:, :7], atol=1e-5)
  assert np.abs(a[:, 7:] - b[:, 7:]).max() > 1e-4


def test_no_embedding_layer_norm_and_names():
  model = GPTDecoder(**TINY)
  names = {layer.name for layer in model.layers}
  assert "embeddings_layer_norm" not in names and "type_embedding" not in names
  assert {"token_embedding", "position_embedding", "transformer_layer_1"} <= names
  assert len(model(_inputs())["encoder_outputs"]) == 2


def test_lm_head_is_tied_projection():
  decoder = GPTDecoder(**TINY)
  model = GPTLanguageModel(decoder)
  inputs = _inputs()
  logits = np.asarray(model(inputs)["lm_logits"])
  states = np.asarray(decoder(inputs)["sequence_output"])
  table = np.asarray(decoder.token_embedding.embeddings)
  np.testing.assert_allclose(logits, states @ table.T, rtol=1e-4, atol=1e-4)
  assert logits.shape == (2, 12, 50)
  # No bias, no transform: the head's only weight is the decoder's embedding table itself.
  head_weights = GPTLMHead(decoder.token_embedding).weights
  assert [w.path for w in head_weights] == [decoder.token_embedding.embeddings.path]
  assert model.count_params() == decoder.count_params()


def test_save_load_and_fit_step(tmp_path):
  model = GPTLanguageModel(GPTDecoder(**TINY))
  inputs = _inputs()
  harness.assert_config_round_trip(model.decoder)
  restored = harness.assert_save_load_round_trip(model, inputs, tmp_path, "lm_logits")
  # Tied weights survive loading: one embedding variable serves both ends.
  assert restored.lm_head.token_embedding is restored.decoder.token_embedding
  model.compile(optimizer="adam", loss={"lm_logits": keras.losses.SparseCategoricalCrossentropy(
      from_logits=True)})
  history = model.fit(inputs, {"lm_logits": inputs["input_word_ids"]}, epochs=1, verbose=0)
  assert np.isfinite(history.history["loss"][0])
