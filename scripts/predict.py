"""Run an exported text-in SavedModel on raw text; prints one JSON object per input.

  python scripts/predict.py --saved_model=out/polarity_export --text_a="a gripping film"
  python scripts/predict.py --saved_model=out/squad_export --question="Who?" --context="Ada wrote."
  python scripts/predict.py --saved_model=out/ner_export --input_files='texts/*.jsonl' \
      --output_file=entities.jsonl

--input_files: JSON lines keyed by the model's inputs (text_a/text_b, question/context,
context/endings, text), comma-separated paths or globs, read in order; no records at all is an
error (exit 2), not an empty output. A record
without text_b gets the answer it gets alone; a model fine-tuned on pairs requires text_b. Needs
only tensorflow and tensorflow_text besides absl.
"""

import json
import os

from absl import app, flags

from bert_keras.atomic_io import write_text  # an earlier output stays whole if this run dies
from bert_keras.configs.flag_file import HELP, parse_flags_with_config_file
from bert_keras.errors import UserError, run_main
from bert_keras.input_checks import check_readable_dir, check_readable_file, is_remote, local_input_files

FLAGS = flags.FLAGS
flags.DEFINE_string("config_file", None, HELP)
flags.DEFINE_string("saved_model", None, "Directory written by export_model.py, or the "
                    "model.tflite of its litert format (run with ai-edge-litert; a directory "
                    "holding model.tflite and no SavedModel runs that file).")
flags.DEFINE_string("input_files", "", "JSON lines, one record per example: comma-separated "
                    "paths or globs.")
flags.DEFINE_string("output_file", "", "Write JSON lines here instead of stdout.")
for _name in ("text_a", "text_b", "question", "context", "text"):
  flags.DEFINE_string(_name, None, f"One example's {_name}.")
flags.DEFINE_multi_string("endings", None, "Multiple choice: one ending per flag.")
flags.DEFINE_integer("batch_size", 32, "Examples per call.", lower_bound=1)
flags.mark_flags_as_required(["saved_model"])


def check_output_file(path: str) -> None:
  """Before any prediction: the output file's directory must exist (and the path not be one)."""
  directory = os.path.dirname(path) or "."
  if not os.path.isdir(directory):
    raise UserError(f"--output_file={path}: no such directory {directory}")
  if os.path.isdir(path):
    raise UserError(f"--output_file={path}: is a directory; expected a file path")


def main(argv):
  del argv
  # Before TensorFlow loads: a wrong path fails in a second.
  if FLAGS.output_file:
    check_output_file(FLAGS.output_file)
  model = FLAGS.saved_model
  if not is_remote(model) and not os.path.exists(os.path.join(model, "saved_model.pb")) and (
      os.path.isfile(os.path.join(model, "model.tflite"))):
    model = os.path.join(model, "model.tflite")  # an export_model.py --format=litert directory
  is_litert = model.endswith(".tflite")
  if is_litert:
    check_readable_file(model, "saved_model", "LiteRT model (model.tflite)")
  else:
    check_readable_dir(model, "saved_model", "export directory")
  if not is_remote(model) and not is_litert:
    graph = os.path.join(model, "saved_model.pb")
    if not os.path.exists(graph):
      raise UserError(f"--saved_model={model}: not a SavedModel directory (no "
                      "saved_model.pb); expected the --output_dir of export_model.py")
    check_readable_file(graph, "", "SavedModel graph (saved_model.pb)")
  input_files = local_input_files(FLAGS.input_files)
  for path in input_files:
    check_readable_file(path, "input_files", "JSON-lines input file")
  from bert_keras.export import saved_model_predictor as predictor

  where = None
  if input_files:
    numbered = [(f"{path}:{line}", record) for path in input_files
                for line, record in predictor.read_jsonl(path)]
    records = [record for _, record in numbered]
    where = [place for place, _ in numbered]
    if not records:
      raise UserError(f"--input_files={FLAGS.input_files}: no records (empty or only blank "
                      "lines); expected one JSON object per line")
  else:
    record = {name: FLAGS[name].value for name in
              ("text_a", "text_b", "question", "context", "text", "endings")
              if FLAGS[name].value is not None}
    if not record:
      raise UserError("give --input_files or the example's inputs (--text_a, --question/--context,"
                      " --context/--endings, --text)")
    records = [record]
  predictor.check_input_types(records, where)
  if is_litert:
    from bert_keras.serving import litert
    loaded = litert.load(model)
  else:
    loaded = predictor.load(model)
  results = predictor.predict(loaded, records, FLAGS.batch_size, where)
  # Keys sorted: the same order on every run and for every record, whatever the export returns.
  lines = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in results)
  if FLAGS.output_file:
    write_text(FLAGS.output_file, lines)
  else:
    print(lines, end="")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags_with_config_file)
