"""Run an exported text-in SavedModel on raw text; prints one JSON object per input.

  python scripts/predict.py --saved_model=out/polarity_export --text_a="a gripping film"
  python scripts/predict.py --saved_model=out/squad_export --question="Who?" --context="Ada wrote."
  python scripts/predict.py --saved_model=out/ner_export --input_file=texts.jsonl \
      --output_file=entities.jsonl

--input_file: JSON lines keyed by the model's inputs (text_a/text_b, question/context,
context/endings, text). Needs only tensorflow and tensorflow_text besides absl.
"""

import json

from absl import app, flags

from bert_keras.errors import UserError, parse_flags, run_main

FLAGS = flags.FLAGS
flags.DEFINE_string("saved_model", None, "Directory written by export_model.py.")
flags.DEFINE_string("input_file", "", "JSON lines, one record per example.")
flags.DEFINE_string("output_file", "", "Write JSON lines here instead of stdout.")
for _name in ("text_a", "text_b", "question", "context", "text"):
  flags.DEFINE_string(_name, None, f"One example's {_name}.")
flags.DEFINE_multi_string("endings", None, "Multiple choice: one ending per flag.")
flags.DEFINE_integer("batch_size", 32, "Examples per call.")
flags.mark_flags_as_required(["saved_model"])


def main(argv):
  del argv
  from bert_keras.export import saved_model_predictor as predictor

  if FLAGS.input_file:
    records = predictor.read_jsonl(FLAGS.input_file)
  else:
    record = {name: FLAGS[name].value for name in
              ("text_a", "text_b", "question", "context", "text", "endings")
              if FLAGS[name].value is not None}
    if not record:
      raise UserError("give --input_file or the example's inputs (--text_a, --question/--context,"
                      " --context/--endings, --text)")
    records = [record]
  results = predictor.predict(predictor.load(FLAGS.saved_model), records, FLAGS.batch_size)
  lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results)
  if FLAGS.output_file:
    with open(FLAGS.output_file, "w", encoding="utf-8") as f:
      f.write(lines)
  else:
    print(lines, end="")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
