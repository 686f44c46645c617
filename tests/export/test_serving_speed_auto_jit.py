"""jit_compile="auto" exports: XLA on single sequences, the plain graph on batches, same outputs;
the SavedModel loads and runs in a fresh process that cannot import this project. (Which branch
runs, and that the switch is not lowered: bench/check_graphs.py.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.export import export_task_model as exporter
from bert_keras.export.serving_options import ServingOptions
from bert_keras.kernels.host_tuning import AUTO_XLA_MAX_ROWS
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from tests.export.fresh_process import run_without_project

SEQ = 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad", "a",
         "plot", "##s", ",", "."]
TEXTS = ["the film was good", "a bad plot , the films", "", "good good good " * 20]


@pytest.fixture(scope="module")
def export(tmp_path_factory):
  keras.utils.set_random_seed(0)
  root = tmp_path_factory.mktemp("auto_jit")
  tokenizer = BertTokenizer(vocabulary=VOCAB)
  config = get_model_config("bert_tiny", vocab_size=len(VOCAB), hidden_size=16, num_layers=2,
                            num_heads=2, intermediate_size=32, max_position_embeddings=SEQ)
  encoder = BertEncoder.from_model_config(config)
  path = exporter.export_task_model(encoder, "encoder", tokenizer, str(root / "auto"), SEQ,
                                    options=ServingOptions(jit_compile="auto"))
  return encoder, tokenizer, path, tf.saved_model.load(path)


def _packed(tokenizer, texts):
  """Packed int32 inputs built in Python: [CLS] pieces [SEP], padded with [PAD] (0) to SEQ."""
  ids = np.zeros((len(texts), SEQ), np.int32)
  for row, pieces in enumerate(tokenizer.encode(texts)):
    pieces = [tokenizer.cls_id] + pieces[:SEQ - 2] + [tokenizer.sep_id]
    ids[row, :len(pieces)] = pieces
  return {"input_word_ids": tf.constant(ids), "input_mask": tf.constant((ids > 0).astype(np.int32)),
          "input_type_ids": tf.zeros_like(ids)}


def test_auto_gives_the_keras_model_outputs_on_either_side_of_the_switch(export):
  encoder, tokenizer, path, loaded = export
  for rows in sorted({1, AUTO_XLA_MAX_ROWS + 1, len(TEXTS)}):
    packed = _packed(tokenizer, TEXTS[:rows])
    direct = encoder(packed, training=False)
    from_text = loaded.signatures["serving_text"](text_a=tf.constant(TEXTS[:rows]))
    from_ids = loaded.signatures["serving_tokenized"](**packed)
    np.testing.assert_array_equal(from_text["input_mask"].numpy(), packed["input_mask"].numpy())
    for outputs in (from_text, from_ids):
      for name in ("pooled_output", "sequence_output"):
        np.testing.assert_allclose(outputs[name].numpy(), direct[name].numpy(), atol=2e-5,
                                   err_msg=f"{name} at {rows} rows")
      np.testing.assert_allclose(outputs["encoder_outputs"].numpy(),
                                 np.stack([x.numpy() for x in direct["encoder_outputs"]], 1),
                                 atol=2e-5)
  # The scalar form of `serve` goes through the same switch.
  single = loaded.serve(tf.constant(TEXTS[1]))
  direct = encoder(_packed(tokenizer, TEXTS[1:2]), training=False)
  np.testing.assert_allclose(single["pooled_output"].numpy(), direct["pooled_output"][0],
                             atol=2e-5)


def test_jit_compile_must_be_true_false_or_auto(export):
  encoder, tokenizer, _, _ = export
  with pytest.raises(ValueError, match="jit_compile"):
    exporter.build_serving_module(encoder, "encoder", tokenizer, SEQ,
                                  options=ServingOptions(jit_compile="xla"))


_LOAD_AUTO = """
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    path, texts = pickle.load(open(sys.argv[1], "rb"))
    loaded = tf.saved_model.load(path)
    text = loaded.signatures["serving_text"]
    outputs = [{k: v.numpy() for k, v in text(text_a=tf.constant(texts[:rows])).items()}
               for rows in (1, len(texts))]
    pickle.dump(dict(outputs=outputs, project=project_modules()), open(sys.argv[2], "wb"))
"""


@pytest.mark.slow
def test_auto_export_runs_in_a_fresh_process_without_the_project(export, tmp_path):
  encoder, tokenizer, path, _ = export
  result = run_without_project(_LOAD_AUTO, (path, TEXTS), tmp_path)
  assert result["project"] == []
  for rows, outputs in zip((1, len(TEXTS)), result["outputs"]):
    direct = encoder(_packed(tokenizer, TEXTS[:rows]), training=False)
    for name in ("pooled_output", "sequence_output"):
      np.testing.assert_allclose(outputs[name], direct[name].numpy(), atol=2e-5,
                                 err_msg=f"{name} at {rows} rows")
