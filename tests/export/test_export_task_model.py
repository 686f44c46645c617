"""Exports a tiny fine-tuned model of every task kind, loads each SavedModel in a fresh process that
cannot import this project (only tensorflow + tensorflow_text), and checks its answers equal the
in-memory model's on the same raw text: batches, scalars, empty strings, over-long and non-ASCII
inputs. The in-memory answers are computed twice: by the serving module before saving, and by an
independent Python path (the tasks' own packing and post-processing, seqeval for entities)."""

import contextlib
import json
import os
import pickle
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.export import export_task_model as exporter
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice
from bert_keras.models.heads.bert_span_labeler import BertSpanLabeler
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.packing import pack_batch
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config

SEQ = 32
LONG = "The quick brown fox jumps over the lazy dog. " * 400  # ~4,000 pieces: truncated
TEXTS = ["A gripping, well-acted film.", "", "Zürich naïve café — 東京 😀 Ελληνικά", LONG]
TEXTS_B = ["It was dull.", "", "Ça va très bien", "short"]
NER_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
QUESTIONS = ["Who wrote the notes?", "What?", "Wo liegt Zürich?", "", "Which engine?"]
CONTEXTS = [
    "Ada Lovelace wrote notes on the Analytical Engine in 1843; they hold the first program.",
    "",
    "Zürich liegt am Zürichsee in der Schweiz, nördlich der Alpen — sehr schön.",
    "Nothing to ask about here.",
    "Charles Babbage designed the Analytical Engine, a general-purpose mechanical computer, "
    "in 1837. Ada Lovelace described it in her notes and published an algorithm for it. " * 3,
]
CONTEXT_MC = ["She opened the door", "", "Der Hund läuft", LONG]
ENDINGS = [["and walked in.", "and flew away.", "", "slowly, then sat."],
           ["a", "b", "c", "d"], ["schnell.", "nach Hause.", "weg 🐕.", ""], ["x", "y", "z", "w"]]
PROJECT_PACKAGES = ("bert_keras",)
SQUAD = dict(version_2=True, null_score_diff_threshold=0.05, doc_stride=8, max_query_length=8,
             max_answer_length=6, n_best_size=20)
# A threshold above every finite s_null - s_best: each question with a span gets its best span.
ANSWER_ALL = 1e9
TAGGED = ["Ada Lovelace met Charles Babbage in London.", "Zürich — Ελληνικά ünïcödé", "", LONG]


def _fine_tune_one_step(model, inputs, labels, loss):
  """One real optimizer step, so the exported weights are 'fine-tuned' ones, not the init.

  Eagerly: tracing a train function would cost more than the step itself on this tiny model.
  """
  model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=loss, run_eagerly=True)
  before = [np.array(w) for w in model.trainable_weights]
  model.train_on_batch(inputs, labels)
  assert any(not np.array_equal(a, np.array(b)) for a, b in zip(before, model.trainable_weights))
  return model


def _packed(tokenizer, a, b=None):
  return pack_batch(tokenizer.encode(a), None if b is None else tokenizer.encode(b), SEQ,
                    tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)


def _tag_about_half(model, tokenizer):
  """Lowers the tagger's "O" bias by the median margin of "O" over the best entity tag on TAGGED,
  so about half of those pieces carry entity tags (after one step every piece is "O")."""
  inputs = _packed(tokenizer, TAGGED)
  logits = model(inputs, training=False)["logits"].numpy()
  margin = (logits[..., 0] - logits[..., 1:].max(-1))[inputs["input_mask"] > 0]
  bias = model.get_layer("tagger").bias
  bias.assign(bias.numpy() - np.median(margin) * np.eye(len(NER_LABELS))[0])
  return model


@contextlib.contextmanager
def _threshold(module, value):
  """The squad module's null_score_diff_threshold set to `value` (a variable the graph reads)."""
  saved = float(module.null_score_diff_threshold.numpy())
  module.null_score_diff_threshold.assign(value)
  try:
    yield
  finally:
    module.null_score_diff_threshold.assign(saved)


@pytest.fixture(scope="module")
def tokenizer():
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


@pytest.fixture(scope="module")
def exports(tokenizer, tmp_path_factory):
  """kind -> (in-memory serving module, SavedModel dir, list of (call name, inputs))."""
  keras.utils.set_random_seed(1)
  # The encoder export has two layers (its encoder_outputs stack them); the task heads sit on one
  # layer: the serving code does not depend on depth, and each layer adds tracing to every save.
  config = lambda layers: get_model_config("bert_tiny", vocab_size=tokenizer.vocab_size,
                                           num_layers=layers, hidden_size=32, num_heads=2,
                                           intermediate_size=64)
  encoder = lambda layers=1: BertEncoder.from_model_config(config(layers))
  root = tmp_path_factory.mktemp("exports")
  batch = _packed(tokenizer, TEXTS[:2], TEXTS_B[:2])
  xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
  models = {
      "encoder": (encoder(2), dict()),
      "classification": (_fine_tune_one_step(
          BertClassifier(encoder(), 3), batch, {"logits": np.array([0, 2])}, {"logits": xent}),
          dict(labels=["neg", "neutral", "pos"])),
      "regression": (_fine_tune_one_step(
          BertClassifier(encoder(), 1), batch, {"logits": np.array([[0.5], [4.0]])},
          {"logits": "mse"}), dict(extra={"pair": True})),
      "squad": (_fine_tune_one_step(
          BertSpanLabeler(encoder()), batch,
          {"start_logits": np.array([3, 0]), "end_logits": np.array([4, 0])},
          {"start_logits": xent, "end_logits": xent}), dict(extra=SQUAD)),
      "multiple_choice": (_fine_tune_one_step(
          BertMultipleChoice(encoder()), {k: np.stack([v] * 4, 1) for k, v in batch.items()},
          {"logits": np.array([1, 3])}, {"logits": xent}), dict()),
      "tagging": (_tag_about_half(_fine_tune_one_step(
          BertTokenClassifier(encoder(), len(NER_LABELS)), batch,
          {"logits": np.tile([0, 1, 2, 0, 3, 4, 0, 0], (2, SEQ // 8))}, {"logits": xent}),
          tokenizer), dict(labels=NER_LABELS)),
  }
  calls = {
      "encoder": [("serve", [TEXTS]), ("serve", [TEXTS, TEXTS_B]), ("serve", [TEXTS[2]])],
      "classification": [("serve", [TEXTS]), ("serve", [TEXTS, TEXTS_B]),
                         ("serve", [TEXTS[2], TEXTS_B[2]]), ("serve", [TEXTS[1]])],
      "regression": [("serve", [TEXTS, TEXTS_B]), ("serve", [TEXTS[0], TEXTS_B[0]])],
      "squad": [("serve", [QUESTIONS, CONTEXTS]), ("serve", [QUESTIONS[0], CONTEXTS[0]])],
      "multiple_choice": [("serve", [CONTEXT_MC, ENDINGS]), ("serve", [CONTEXT_MC[0], ENDINGS[0]])],
      "tagging": [("serve", [TEXTS + ["Ada Lovelace met Charles Babbage in London."]]),
                  ("serve", [""])],
  }
  result = {}
  for kind, (model, options) in models.items():
    module = exporter.build_serving_module(model, kind, tokenizer, SEQ, task=f"tiny_{kind}",
                                           **options)
    path = exporter.save_serving_module(module, str(root / kind))
    result[kind] = (module, path, calls[kind])
  return result


_LOADER = textwrap.dedent("""
    import importlib.abc, pickle, sys

    class _NoProject(importlib.abc.MetaPathFinder):
      def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {packages!r}:
          raise ImportError("the project is not importable here: " + name)

    sys.meta_path.insert(0, _NoProject())
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401

    jobs = pickle.load(open(sys.argv[1], "rb"))
    results = {{}}
    for kind, (path, calls) in jobs.items():
      loaded = tf.saved_model.load(path)
      outputs = [{{k: v.numpy() for k, v in getattr(loaded, name)(*map(tf.constant, args)).items()}}
                 for name, args in calls]
      default = loaded.signatures["serving_default"]
      names = sorted(default.structured_input_signature[1])
      tokenized = loaded.signatures["serving_tokenized"]
      results[kind] = dict(
          outputs=outputs, default_inputs=names, signatures=sorted(loaded.signatures),
          kind=loaded.kind.numpy().decode(), labels=[l.decode() for l in loaded.labels.numpy()],
          max_seq_length=int(loaded.max_seq_length.numpy()),
          lower_case=bool(loaded.lower_case.numpy()),
          vocab=open(loaded.vocab_file.asset_path.numpy().decode(), encoding="utf-8").read())
      if kind == "squad":
        results[kind]["threshold"] = float(loaded.null_score_diff_threshold.numpy())
        # The threshold is a variable of the loaded model: re-tuned, the answers follow.
        loaded.null_score_diff_threshold.assign({answer_all!r})
        results[kind]["answered"] = {{
            k: v.numpy() for k, v in loaded.serve(*map(tf.constant, calls[0][1])).items()}}
    project = sorted(m for m in sys.modules if m.split(".")[0] in {packages!r})
    results["__project_modules__"] = project
    pickle.dump(results, open(sys.argv[2], "wb"))
""").format(packages=PROJECT_PACKAGES, answer_all=ANSWER_ALL)


@pytest.fixture(scope="module")
def loaded_results(exports, tmp_path_factory):
  work = tmp_path_factory.mktemp("fresh_process")
  jobs = {kind: (path, calls) for kind, (_, path, calls) in exports.items()}
  (work / "jobs.pkl").write_bytes(pickle.dumps(jobs))
  (work / "loader.py").write_text(_LOADER)
  env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  run = subprocess.run([sys.executable, "-I", str(work / "loader.py"), str(work / "jobs.pkl"),
                        str(work / "out.pkl")], cwd=work, env=env, capture_output=True,
                       text=True, timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  return pickle.loads((work / "out.pkl").read_bytes())


def _assert_same(actual: dict, expected: dict, where: str):
  assert sorted(actual) == sorted(expected), where
  as_array = lambda x: np.array(x, dtype=object) if isinstance(x, bytes) else np.asarray(x)
  for key, value in expected.items():
    value = as_array(value.numpy() if hasattr(value, "numpy") else value)
    got = as_array(actual[key])
    assert got.shape == value.shape, f"{where} {key}: {got.shape} != {value.shape}"
    if value.dtype.kind in "fc":
      np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-5, err_msg=f"{where} {key}")
    else:
      np.testing.assert_array_equal(got, value, err_msg=f"{where} {key}")


@pytest.mark.slow
def test_fresh_process_without_project_gives_in_memory_answers(exports, loaded_results):
  assert loaded_results["__project_modules__"] == []
  for kind, (module, _, calls) in exports.items():
    result = loaded_results[kind]
    assert result["kind"] == kind
    assert result["max_seq_length"] == SEQ and result["lower_case"] is True
    assert result["labels"] == module.label_list
    assert result["vocab"].split("\n")[:-1] == module.tokenizer.vocabulary
    assert "serving_default" in result["signatures"]
    assert "serving_tokenized" in result["signatures"]
    for (name, args), got in zip(calls, result["outputs"]):
      expected = getattr(module, name)(*map(tf.constant, args))
      _assert_same(got, expected, f"{kind} {name}{[np.shape(a) for a in args]}")
  assert loaded_results["squad"]["threshold"] == pytest.approx(SQUAD["null_score_diff_threshold"])
  module, _, calls = exports["squad"]
  with _threshold(module, ANSWER_ALL):
    expected = module.serve(*map(tf.constant, calls[0][1]))
  answered = loaded_results["squad"]["answered"]
  _assert_same(answered, expected, "squad answering every question")
  for i, context in enumerate(CONTEXTS):  # the loaded model's answers are spans of the context
    answer, start, end = answered["answer"][i].decode(), answered["start"][i], answered["end"][i]
    if answered["no_answer"][i]:
      assert answer == "" and start == end == -1
    else:
      assert context[start:end] == answer, i
  assert sum(bool(answer) for answer in answered["answer"]) >= 3
  assert loaded_results["classification"]["default_inputs"] == ["text_a"]
  assert loaded_results["regression"]["default_inputs"] == ["text_a", "text_b"]
  assert loaded_results["squad"]["default_inputs"] == ["context", "question"]


def _softmax(x):
  e = np.exp(x - x.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)


def test_classification_matches_python_packing(exports, tokenizer):
  module, _, _ = exports["classification"]
  out = module.serve(tf.constant(TEXTS), tf.constant(TEXTS_B))
  # A text_b with no pieces packs text_a alone (original run_classifier.py).
  rows = [_packed(tokenizer, [a], [b] if tokenizer.encode([b])[0] else None)
          for a, b in zip(TEXTS, TEXTS_B)]
  inputs = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
  logits = module.model(inputs, training=False)["logits"].numpy()
  np.testing.assert_allclose(out["probabilities"].numpy(), _softmax(logits), atol=1e-5)
  assert [s.decode() for s in out["label"].numpy()] == [
      ["neg", "neutral", "pos"][i] for i in logits.argmax(-1)]
  single = module.serve(tf.constant(TEXTS[3]))  # ~4,000 pieces: truncated, no error
  assert single["probabilities"].shape == (3,)
  tokenized = module.serve_tokenized(**{k: tf.constant(v) for k, v in inputs.items()})
  np.testing.assert_allclose(tokenized["probabilities"].numpy(), _softmax(logits), atol=1e-5)


def test_regression_and_encoder_match_python_packing(exports, tokenizer):
  module, _, _ = exports["regression"]
  inputs = _packed(tokenizer, TEXTS, TEXTS_B)  # a pair task packs B even when empty, as trained
  expected = module.model(inputs, training=False)["logits"].numpy()[:, 0]
  np.testing.assert_allclose(module.serve(tf.constant(TEXTS), tf.constant(TEXTS_B))["score"],
                             expected, atol=1e-5)
  module, _, _ = exports["encoder"]
  inputs = _packed(tokenizer, TEXTS)
  expected = module.model(inputs, training=False)
  out = module.serve(tf.constant(TEXTS))
  np.testing.assert_allclose(out["pooled_output"], expected["pooled_output"], atol=1e-5)
  # On the real tokens; past them each row holds padding (zeros past its own length bucket).
  real = inputs["input_mask"] > 0
  np.testing.assert_allclose(out["sequence_output"].numpy()[real],
                             expected["sequence_output"].numpy()[real], atol=1e-5)
  assert out["encoder_outputs"].shape == (len(TEXTS), 2, SEQ, 32)
  np.testing.assert_allclose(out["encoder_outputs"][:, 0].numpy()[real],
                             expected["encoder_outputs"][0].numpy()[real], atol=1e-5)
  np.testing.assert_array_equal(out["input_mask"], inputs["input_mask"])


def test_multiple_choice_matches_python_packing(exports, tokenizer):
  module, _, _ = exports["multiple_choice"]
  contexts = [c for c in CONTEXT_MC for _ in range(4)]
  inputs = _packed(tokenizer, contexts, [e for row in ENDINGS for e in row])
  inputs = {k: v.reshape(len(CONTEXT_MC), 4, SEQ) for k, v in inputs.items()}
  logits = module.model(inputs, training=False)["logits"].numpy()
  out = module.serve(tf.constant(CONTEXT_MC), tf.constant(ENDINGS))
  np.testing.assert_allclose(out["probabilities"], _softmax(logits), atol=1e-5)
  np.testing.assert_array_equal(out["choice"], logits.argmax(-1))


def test_squad_matches_the_task_postprocessing(exports, tokenizer):
  """Windows, max context, n-best and the v2 decision equal SquadTask's Python path: at the
  exported threshold, at one that answers every question with a span (answer text and character
  offsets, one of them past the first window) and at one between the questions' null odds."""
  from bert_keras.tasks.registry import get_task_class
  from bert_keras.tasks.squad import SquadExample, split_passage
  from bert_keras.configs.tasks import SpanTaskConfig

  module, _, _ = exports["squad"]
  settings = {k: v for k, v in SQUAD.items() if k not in ("version_2", "null_score_diff_threshold")}
  examples = []
  for i, (question, context) in enumerate(zip(QUESTIONS, CONTEXTS)):
    words, _, starts = split_passage(context)
    examples.append(SquadExample(qas_id=str(i), question_text=question, context=context,
                                 doc_tokens=words, word_starts=starts, answers=[]))

  def python_task(threshold):
    """SquadTask at this threshold, with its features (its postprocess needs make_features)."""
    task = get_task_class("squad_v2")(SpanTaskConfig(
        task="squad_v2", max_seq_length=SEQ, null_score_diff_threshold=threshold, **settings))
    return task, task.make_features(examples, tokenizer, training=False)

  _, features = python_task(0.0)
  assert len(features) > len(examples)  # the long contexts need several windows
  outputs = module.model(features.inputs, training=False)

  def check(threshold):
    task, _ = python_task(threshold)
    predictions = task.postprocess(examples, features, outputs)
    with _threshold(module, threshold):
      out = {k: v.numpy() for k, v in module.serve(tf.constant(QUESTIONS),
                                                   tf.constant(CONTEXTS)).items()}
    for i, context in enumerate(CONTEXTS):
      answer = out["answer"][i].decode()
      start, end = int(out["start"][i]), int(out["end"][i])
      if out["no_answer"][i]:
        assert answer == "" and start == end == -1
      else:  # character offsets into the original context, those of the Python path's answer
        assert answer and context[start:end] == answer, i
        best = next(n for n in predictions["nbest"][str(i)] if n["text"])
        assert (start, end) == (best["answer_start"], best["answer_start"] + len(answer)), i
      assert answer == predictions["predictions"][str(i)], i
      if context:
        assert float(out["null_score_diff"][i]) == pytest.approx(
            predictions["null_odds"][str(i)], abs=1e-4)
        assert (predictions["best_non_null"][str(i)] != "") == bool(np.isfinite(out["score"][i]))
    return out

  check(SQUAD["null_score_diff_threshold"])
  answered = check(ANSWER_ALL)
  assert answered["no_answer"].tolist() == [not c for c in CONTEXTS]  # a span wherever text is
  # One answer lies past the first window: its offsets count from the start of the context.
  room = SEQ - 3 - len(tokenizer.encode([QUESTIONS[4]])[0][:SQUAD["max_query_length"]])
  ends = tokenizer.tokenize_with_offsets(tf.constant(CONTEXTS[4:5]))[2].to_list()[0]
  assert answered["start"][4] >= len(CONTEXTS[4].encode()[:ends[room - 1]].decode())
  # Between the questions' null odds: some answered, some not, as the Python path decides.
  odds = sorted(answered["null_score_diff"][np.isfinite(answered["null_score_diff"])])
  middle = check(float(odds[len(odds) // 2 - 1] + odds[len(odds) // 2]) / 2)
  assert middle["no_answer"].any() and middle["answer"].astype(bool).any()


def test_tagging_matches_first_subtoken_and_seqeval(exports, tokenizer):
  from seqeval.metrics.sequence_labeling import get_entities

  module, _, _ = exports["tagging"]
  texts = TAGGED
  out = module.serve(tf.constant(texts))
  ids, begins, ends = (t.to_list() for t in tokenizer.tokenize_with_offsets(tf.constant(texts)))
  inputs = pack_batch(ids, None, SEQ, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
  tags = module.model(inputs, training=False)["logits"].numpy().argmax(-1)
  for row, text in enumerate(texts):
    data = text.encode("utf-8")
    words = []  # (tag, begin byte, end byte) per word, tagged at its first piece
    for p, (piece, b, e) in enumerate(zip(ids[row][:SEQ - 2], begins[row], ends[row])):
      if p == 0 or not tokenizer.id_to_token(piece).startswith("##"):
        words.append([NER_LABELS[tags[row, p + 1]], b, e])
      else:
        words[-1][2] = e
    expected = [(kind, len(data[:words[first][1]].decode()), len(data[:words[last][2]].decode()))
                for kind, first, last in get_entities([w[0] for w in words])]
    n = int(out["num_entities"][row])
    got = [(out["entity_type"][row, k].numpy().decode(), int(out["entity_start"][row, k]),
            int(out["entity_end"][row, k])) for k in range(n)]
    assert got == expected, text[:40]
    for k, (_, start, end) in enumerate(got):
      assert out["entity_text"][row, k].numpy().decode() == text[start:end]
  assert int(out["num_entities"][2]) == 0
  assert int(out["num_entities"][0]) > 0 and int(out["num_entities"][3]) > 0  # offsets compared


def test_export_info_and_atomic_replace(exports, tokenizer):
  module, path, _ = exports["classification"]
  with open(os.path.join(path, "assets.extra", exporter.EXPORT_INFO), encoding="utf-8") as f:
    info = json.load(f)
  assert info["kind"] == "classification" and info["labels"] == ["neg", "neutral", "pos"]
  assert "serving_tokenized" in info["signatures"]
  # Re-exporting over an existing directory replaces it and leaves no temporary siblings.
  exporter.save_serving_module(module, path)
  siblings = [n for n in os.listdir(os.path.dirname(path)) if n.startswith("classification")]
  assert siblings == ["classification"]


def test_kind_for_reads_the_model_and_task_info(exports):
  models = {kind: module.model for kind, (module, _, _) in exports.items()}
  assert exporter.kind_for(models["squad"], {}) == "squad"
  assert exporter.kind_for(models["multiple_choice"], {}) == "multiple_choice"
  assert exporter.kind_for(models["tagging"], {"label_names": NER_LABELS}) == "tagging"
  assert exporter.kind_for(models["classification"], {"label_names": ["a", "b", "c"]}) == \
      "classification"
  assert exporter.kind_for(models["regression"], {"regression": True}) == "regression"


def test_bad_kind_and_missing_labels_fail_fast(exports, tokenizer):
  from bert_keras.errors import UserError

  model = exports["classification"][0].model
  with pytest.raises(UserError, match="kind='nope'"):
    exporter.build_serving_module(model, "nope", tokenizer, SEQ)
  with pytest.raises(ValueError, match="label names"):
    exporter.build_serving_module(model, "classification", tokenizer, SEQ)


def _empty_inputs(kind):
  empty = tf.constant([], tf.string)
  return {"squad": [empty, empty], "multiple_choice": [empty, tf.zeros([0, 4], tf.string)],
          "regression": [empty, empty]}.get(kind, [empty])


@pytest.fixture(scope="module")
def loaded(exports):
  """kind -> the SavedModel loaded in this process (loading is most of a test's time)."""
  return {kind: tf.saved_model.load(path) for kind, (_, path, _) in exports.items()}


def test_every_kind_answers_an_empty_batch_with_empty_outputs(loaded):
  for kind, model in loaded.items():
    default = model.signatures["serving_default"]
    empty_rows = {name: tf.zeros([0] + [4] * (spec.shape.rank - 1), spec.dtype)
                  for name, spec in default.structured_input_signature[1].items()}
    for outputs in (model.serve(*_empty_inputs(kind)), default(**empty_rows)):
      assert outputs, kind
      for name, value in outputs.items():
        assert value.shape[0] == 0, f"{kind} {name}: {value.shape}"


def _renamed(value, suffix: str):
  """A text input with `suffix` appended to each of its strings (same nesting)."""
  if isinstance(value, str):
    return value + suffix
  return [_renamed(v, suffix) for v in value]


def test_loaded_serve_takes_python_strings_and_lists_without_retracing(exports, loaded):
  """The README's `m.serve([...])`: Python strings and lists are converted to tensors before the
  loaded function looks up its trace, so new texts run the saved graph in every call form, with
  the answers of tensors. Each new Python value used to be a new trace (seconds and about 19 MiB
  per call on MiniLM)."""
  for kind, (module, _, calls) in exports.items():
    for name, args in calls:
      outputs = getattr(loaded[kind], name)(*args)
      _assert_same({k: v.numpy() for k, v in outputs.items()},
                   getattr(module, name)(*map(tf.constant, args)), f"{kind} {name} Python")
    traces = loaded[kind].serve.__call__.experimental_get_tracing_count()
    for i in range(2):
      for name, args in calls:
        getattr(loaded[kind], name)(*_renamed(args, f" {i}"))
    assert loaded[kind].serve.__call__.experimental_get_tracing_count() == traces, kind


def test_serve_refuses_texts_of_other_shapes(loaded):
  """Any string shape converts, so the graph checks it: one clear error naming the inputs."""
  with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected text_a a string or a 1-D"):
    loaded["classification"].serve([["a", "b"]])
  with pytest.raises(tf.errors.InvalidArgumentError, match=r"text_b of the same shape"):
    loaded["classification"].serve("a", ["b"])
  choice = loaded["multiple_choice"]
  with pytest.raises(tf.errors.InvalidArgumentError, match=r"endings with 1 more axis"):
    choice.serve(["a"], ["b"])
  with pytest.raises(tf.errors.InvalidArgumentError, match=r"context has 1 rows but endings has 2"):
    choice.serve(["a"], [["b", "c"], ["d", "e"]])


def test_serve_runs_on_an_export_nobody_else_holds(exports):
  """`tf.saved_model.load(path).serve(...)` in one expression, as the README writes it: the loaded
  object is referenced by nothing but the call (it used to be freed, with its variables, first)."""
  for kind in ("squad", "tagging"):  # one serving class each; every kind is one ServingCall
    module, path, calls = exports[kind]
    name, args = calls[0]
    outputs = tf.saved_model.load(path).serve(*map(tf.constant, args))
    _assert_same({k: v.numpy() for k, v in outputs.items()},
                 getattr(module, name)(*map(tf.constant, args)), kind)


def test_pair_model_refuses_text_a_alone(exports):
  """A model fine-tuned on pairs answers only pairs (as scripts/predict.py, which needs text_b)."""
  module, path, _ = exports["regression"]  # exported with pair=True
  loaded = tf.saved_model.load(path)
  assert "serving_text" not in loaded.signatures
  with pytest.raises(tf.errors.InvalidArgumentError, match="fine-tuned on sentence pairs"):
    loaded.serve(tf.constant(TEXTS))
  with pytest.raises(tf.errors.InvalidArgumentError, match="fine-tuned on sentence pairs"):
    module.serve(tf.constant(TEXTS[0]))
  assert loaded.serve(tf.constant(TEXTS), tf.constant([""] * len(TEXTS)))["score"].shape == (4,)
