"""Test checkpoints in the official layouts, and an independent NumPy BERT to check imports against.

`write_tf1_checkpoint` writes a Google checkpoint the way the original TF1 code does
(tf.compat.v1.train.Saver over variables with the original names, in a tf.Graph), so the reader is
tested against files it did not write itself. `numpy_bert` follows google-research/bert modeling.py
(post-LN blocks, -10000 mask bias, tanh pooler, tied MLM output, NSP `transpose_b=True`) using only
the Google-named arrays: a wrong split of q/k/v or a missing transpose changes its outputs.
"""

import json
import os

import numpy as np
import tensorflow as tf

# A tiny Google bert_config.json (type_vocab_size 3 so that segment tables are not square-ish).
TINY_GOOGLE_CONFIG = {
    "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 48,
    "max_position_embeddings": 40, "num_attention_heads": 4, "num_hidden_layers": 2,
    "type_vocab_size": 3, "vocab_size": 57,
}


def random_google_weights(config, heads=True, seed=0):
  """{Google name: float32 array} with the shapes modeling.py / run_pretraining.py create."""
  rng = np.random.default_rng(seed)
  h, i, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
  normal = lambda *shape: rng.normal(0.0, 0.2, shape).astype("float32")
  w = {
      "bert/embeddings/word_embeddings": normal(v, h),
      "bert/embeddings/token_type_embeddings": normal(config["type_vocab_size"], h),
      "bert/embeddings/position_embeddings": normal(config["max_position_embeddings"], h),
      "bert/embeddings/LayerNorm/gamma": 1.0 + normal(h),
      "bert/embeddings/LayerNorm/beta": normal(h),
      "bert/pooler/dense/kernel": normal(h, h), "bert/pooler/dense/bias": normal(h),
  }
  for layer in range(config["num_hidden_layers"]):
    p = f"bert/encoder/layer_{layer}"
    for part in ("query", "key", "value"):
      w[f"{p}/attention/self/{part}/kernel"] = normal(h, h)
      w[f"{p}/attention/self/{part}/bias"] = normal(h)
    w[f"{p}/attention/output/dense/kernel"] = normal(h, h)
    w[f"{p}/attention/output/dense/bias"] = normal(h)
    w[f"{p}/intermediate/dense/kernel"] = normal(h, i)
    w[f"{p}/intermediate/dense/bias"] = normal(i)
    w[f"{p}/output/dense/kernel"] = normal(i, h)
    w[f"{p}/output/dense/bias"] = normal(h)
    for norm in ("attention/output/LayerNorm", "output/LayerNorm"):
      w[f"{p}/{norm}/gamma"] = 1.0 + normal(h)
      w[f"{p}/{norm}/beta"] = normal(h)
  if heads:
    w.update({
        "cls/predictions/transform/dense/kernel": normal(h, h),
        "cls/predictions/transform/dense/bias": normal(h),
        "cls/predictions/transform/LayerNorm/gamma": 1.0 + normal(h),
        "cls/predictions/transform/LayerNorm/beta": normal(h),
        "cls/predictions/output_bias": normal(v),
        "cls/seq_relationship/output_weights": normal(2, h),  # (2, H): transposed vs a kernel
        "cls/seq_relationship/output_bias": normal(2),
    })
  return w


def write_tf1_checkpoint(weights, directory, config=None, name="bert_model.ckpt",
                         training_state=True):
  """Writes `weights` with tf.compat.v1.train.Saver (plus Adam slots and global_step, as released
  pretraining checkpoints have them) and bert_config.json; returns the checkpoint prefix."""
  os.makedirs(directory, exist_ok=True)
  with tf.Graph().as_default():
    variables = {n: tf.compat.v1.Variable(a, name=n.replace("/", "__")) for n, a in weights.items()}
    if training_state:
      first = sorted(weights)[0]
      variables[first + "/adam_m"] = tf.compat.v1.Variable(np.zeros_like(weights[first]))
      variables[first + "/adam_v"] = tf.compat.v1.Variable(np.ones_like(weights[first]))
      variables["global_step"] = tf.compat.v1.Variable(np.int64(1000))
    saver = tf.compat.v1.train.Saver(var_list=variables)
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      prefix = saver.save(session, os.path.join(directory, name), write_meta_graph=False)
  if config is not None:
    with open(os.path.join(directory, "bert_config.json"), "w") as f:
      json.dump(config, f)
  return prefix


def _layer_norm(x, gamma, beta, eps=1e-12):
  mean = x.mean(-1, keepdims=True)
  var = ((x - mean) ** 2).mean(-1, keepdims=True)
  return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu_tanh(x):  # modeling.py's gelu
  return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def numpy_bert(w, config, ids, mask, types, act=gelu_tanh):
  """(sequence_output, pooled_output, mlm_logits over all positions, nsp_logits) in float64."""
  w = {k: v.astype("float64") for k, v in w.items()}
  batch, seq = ids.shape
  heads = config["num_attention_heads"]
  head_dim = config["hidden_size"] // heads
  x = (w["bert/embeddings/word_embeddings"][ids] + w["bert/embeddings/token_type_embeddings"][types]
       + w["bert/embeddings/position_embeddings"][:seq][None])
  x = _layer_norm(x, w["bert/embeddings/LayerNorm/gamma"], w["bert/embeddings/LayerNorm/beta"])
  bias = (1.0 - mask[:, None, None, :].astype("float64")) * -10000.0  # (b, 1, 1, s)
  split = lambda t: t.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)  # (b, h, s, d)
  for layer in range(config["num_hidden_layers"]):
    p = f"bert/encoder/layer_{layer}"
    dense = lambda t, n: t @ w[f"{p}/{n}/kernel"] + w[f"{p}/{n}/bias"]
    q, k, v = (split(dense(x, f"attention/self/{n}")) for n in ("query", "key", "value"))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim) + bias
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * head_dim)
    attention = dense(context, "attention/output/dense")
    x = _layer_norm(x + attention, w[f"{p}/attention/output/LayerNorm/gamma"],
                    w[f"{p}/attention/output/LayerNorm/beta"])
    ffn = dense(act(dense(x, "intermediate/dense")), "output/dense")
    x = _layer_norm(x + ffn, w[f"{p}/output/LayerNorm/gamma"], w[f"{p}/output/LayerNorm/beta"])
  pooled = np.tanh(x[:, 0] @ w["bert/pooler/dense/kernel"] + w["bert/pooler/dense/bias"])
  mlm = nsp = None
  if "cls/predictions/output_bias" in w:
    t = act(x @ w["cls/predictions/transform/dense/kernel"]
            + w["cls/predictions/transform/dense/bias"])
    t = _layer_norm(t, w["cls/predictions/transform/LayerNorm/gamma"],
                    w["cls/predictions/transform/LayerNorm/beta"])
    mlm = t @ w["bert/embeddings/word_embeddings"].T + w["cls/predictions/output_bias"]
    nsp = pooled @ w["cls/seq_relationship/output_weights"].T + w["cls/seq_relationship/output_bias"]
  return x, pooled, mlm, nsp


def sample_inputs(config, batch=2, seq=11, padding=3, seed=1):
  rng = np.random.default_rng(seed)
  ids = rng.integers(1, config["vocab_size"], size=(batch, seq)).astype("int32")
  mask = np.ones((batch, seq), "int32")
  mask[1, seq - padding:] = 0
  types = rng.integers(0, config["type_vocab_size"], size=(batch, seq)).astype("int32")
  return ids, mask, types


def as_model_inputs(ids, mask, types, positions=None):
  inputs = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}
  if positions is not None:
    inputs["masked_lm_positions"] = positions
  return inputs
