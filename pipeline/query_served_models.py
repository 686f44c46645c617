"""Loads every pushed model from a serving directory (latest version) and asks it a few questions.

Runs in a fresh process (the demo starts it with `python -m pipeline.query_served_models`), so it
proves that a pushed SavedModel needs nothing from the pipeline's Python state: only tensorflow and
tensorflow_text (whose ops the in-graph tokenizer uses).

  python -m pipeline.query_served_models --serving_dir demo_out/serving
"""

from __future__ import annotations

import os
import re

from absl import app, flags

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError, parse_flags, run_main
from bert_keras.json_io import read_json_file

flags.DEFINE_string("serving_dir", None, "Directory of <base>/<model>/<version>/ SavedModels.")
flags.DEFINE_string("output_file", None, "Also write the printed answers here.")
FLAGS = flags.FLAGS

SENTENCES = [
    "A gripping, beautifully acted film that stays with you long after the credits.",
    "The plot is a mess and the jokes fall flat; I was bored from start to finish.",
    "An uneven but often charming comedy.",
]
# (relation, text_a, text_b): a reader scores the paraphrase and the same-event pair above the
# unrelated pair. The Lee task the models learn from rates whole news documents, not sentences.
PAIRS = [
    ("paraphrase", "The central bank raised interest rates to fight inflation.",
     "Interest rates went up as the bank tried to slow rising prices."),
    ("unrelated", "The central bank raised interest rates to fight inflation.",
     "The football team won the championship after extra time."),
    ("same event", "Bushfires forced thousands of residents to flee their homes near Sydney.",
     "Firefighters battled blazes on the outskirts of Sydney as residents were evacuated."),
]


def judge_similarity(scores) -> str:
  """One line saying whether the scores of PAIRS rank the related pairs above the unrelated one."""
  by_relation = {relation: float(score) for (relation, _, _), score in zip(PAIRS, scores)}
  unrelated = by_relation.pop("unrelated")
  wrong = [relation for relation, score in by_relation.items() if score <= unrelated]
  if not wrong:
    return ("ranks the " + " and the ".join(by_relation) + " pairs above the unrelated pair, "
            "as a reader would")
  return ("WRONG ORDER: scores the unrelated pair at or above the " + " and the ".join(wrong)
          + " pair: this model has not learned sentence similarity (its dev Pearson is in the "
          "run report)")


def similarity_answers(scores) -> list[str]:
  """A line per pair of PAIRS with its score and relation, then the verdict on their order."""
  lines = [f"score {float(score):+.3f}  {relation + ':':<11} {a!r} vs {b!r}"
           for (relation, a, b), score in zip(PAIRS, scores, strict=True)]
  return lines + [judge_similarity(scores)]


def find_models(serving_dir: str) -> list[tuple[str, str]]:
  """[(name, latest version dir)] for every model directory holding integer versions."""
  found = []
  for root, dirs, _ in os.walk(serving_dir):
    versions = [int(d) for d in dirs if re.fullmatch(r"\d+", d)]
    if versions:
      found.append((os.path.relpath(root, serving_dir), os.path.join(root, str(max(versions)))))
      dirs[:] = []  # versions are leaves
  return sorted(found)


def ask(version_dir: str) -> list[str]:
  """Loads one SavedModel and returns printable answers to the questions its kind can answer."""
  import tensorflow as tf  # pylint: disable=import-outside-toplevel
  import tensorflow_text  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import

  info = read_json_file(os.path.join(version_dir, "assets.extra", "export_info.json"),
                        "export_info.json", expected=dict)
  loaded = tf.saved_model.load(version_dir)
  serve = loaded.signatures["serving_default"]
  pair = "text_b" in serve.structured_input_signature[1]
  lines = []
  if info.get("kind") == "classification" and not pair:
    out = serve(text_a=tf.constant(SENTENCES))
    for text, label, probs in zip(SENTENCES, out["label"].numpy(), out["probabilities"].numpy()):
      lines.append(f"{label.decode():>4} (p={probs.max():.2f})  {text}")
  elif info.get("kind") == "regression" and pair:
    _, a, b = zip(*PAIRS)
    out = serve(text_a=tf.constant(a), text_b=tf.constant(b))
    lines += similarity_answers(out["score"].numpy())
  else:
    lines.append(f"(no demo questions for kind={info.get('kind')!r}, pair={pair})")
  return lines


def main(argv):
  del argv
  if not FLAGS.serving_dir or not os.path.isdir(FLAGS.serving_dir):
    raise UserError(f"--serving_dir={FLAGS.serving_dir!r}: no such directory")
  models = find_models(FLAGS.serving_dir)
  if not models:
    raise UserError(f"{FLAGS.serving_dir}: no pushed model (was any model blessed?)")
  text = []
  for name, version_dir in models:
    block = [f"== {name} (version {os.path.basename(version_dir)}, loaded from {version_dir})"]
    block += ["  " + line for line in ask(version_dir)]
    print("\n".join(block), flush=True)
    text += block
  if FLAGS.output_file:
    write_text(FLAGS.output_file, "\n".join(text) + "\n")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
