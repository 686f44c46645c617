r"""Export a fine-tuned task (or a bare encoder) as a text-in SavedModel, a LiteRT model, or both.

  python scripts/export_model.py --finetuned_dir=out/polarity --output_dir=out/polarity_export
  python scripts/export_model.py --init_checkpoint="$(python -c 'from bert_keras import \
      resources; print(resources.minilm_dir())')" --max_seq_length=128 --output_dir=out/minilm_export
  python scripts/export_model.py --finetuned_dir=out/polarity --output_dir=out/polarity_litert \
      --format=litert --quantize=int8

The SavedModel needs only tensorflow and tensorflow_text: `import tensorflow_text` then
`tf.saved_model.load(dir).serve(["some text"])`. `saved_model_cli show --dir DIR --all` lists its
signatures (serving_default: raw strings; serving_tokenized: packed int32 ids). The resolved config
(every setting as the export used it, defaults and the task's own values filled in) is written to
DIR/assets.extra/export_config.json; --config_file takes such a file (JSON or YAML, the
ExportConfig's field names) and flags given on the command line override its values.
--format=litert writes DIR/model.tflite (and DIR/assets.extra/) instead of the SavedModel, for
`bert_keras.serving.litert.load("DIR/model.tflite").serve([...])` without TensorFlow;
--format=saved_model,litert writes both. Bad input: one line, exit 2.
"""

from absl import app, flags

from bert_keras.errors import parse_flags, run_main

FLAGS = flags.FLAGS
flags.DEFINE_string("config_file", None, "start from this ExportConfig file, JSON or YAML (e.g. an "
                    "export's assets.extra/export_config.json); flags given override its values")
flags.DEFINE_string("finetuned_dir", "", "run_finetuning output directory (model.keras, "
                    "task_info.json, vocab.txt).")
flags.DEFINE_string("init_checkpoint", "", "Encoder checkpoint (Google, Hugging Face, .keras) "
                    "to export for feature extraction.")
flags.DEFINE_string("output_dir", None, "SavedModel directory to write (replaced atomically).")
flags.DEFINE_string("vocab_file", "", "vocab.txt (default: the source's).")
flags.DEFINE_bool("lower_case", None, "Tokenizer casing; not given = the source's.")
flags.DEFINE_integer("max_seq_length", None, "Encoder exports: packed length (default 128; "
                     "tasks keep theirs).")
flags.DEFINE_integer("doc_stride", 0, "SQuAD and NER: pieces between window starts for texts "
                     "longer than one window; 0 = the task's own (NER: half a window).")
flags.DEFINE_enum("jit_compile", "false", ["false", "true", "auto"],
                  "XLA-compile the Transformer part of the graph: true, false (plain TF graph), or auto "
                  "(XLA for single-row calls, where it is faster on CPU; the plain graph for batches).")
flags.DEFINE_integer("head_groups", None, "Plain graph: groups of heads, each with its share "
                     "of the feed-forward width, that every Transformer block runs side by side "
                     "(same outputs; lets TF's inter-op pool use several cores on small batches; "
                     "the export holds the q-k-v and widening kernels a second time, in the "
                     "groups' layout); 1 = unsplit; default by width: 2 below hidden 768, else 1.")
flags.DEFINE_string("length_buckets", "auto", "Text-in calls pad to their longest row rounded up "
                    "to one of these lengths (in a batch, encoder, classifier and NER exports run "
                    "each row at its own): auto (16, 24, 32, 48, 64, ... max_seq_length: powers "
                    "of two and 1.5x each), fixed (always max_seq_length, one shape for TPU "
                    "servers) or e.g. 16,32,64 (fewer shapes, more padding).")
flags.DEFINE_bool("overwrite", False, "Replace an earlier export of a different task at "
                  "--output_dir (an earlier export of the same task is always replaced).")
flags.DEFINE_enum("format", "saved_model", ["saved_model", "litert", "saved_model,litert"],
                  "What --output_dir holds: saved_model (the text-in SavedModel), litert "
                  "(model.tflite, which bert_keras.serving.litert and predict.py run on raw text "
                  "with ai-edge-litert and tokenizers, without TensorFlow; with assets.extra/ as a "
                  "SavedModel's) or saved_model,litert (both).")
flags.DEFINE_enum("quantize", "none", ["none", "int8"], "litert format: int8 = dynamic-range "
                  "int8 weights (smaller, faster, a small metric drop: docs/benchmarks.md).")


def config_from_flags():
  """The ExportConfig: its defaults < --config_file < the flags given on the command line."""
  from bert_keras.configs.export import ExportConfig
  from bert_keras.errors import UserError

  values = {}
  for name in ExportConfig.field_names():
    if FLAGS[name].present or not FLAGS.config_file:
      value = FLAGS[name].value
      values[name] = {"true": True, "false": False}.get(value, value)  # --jit_compile
  if not FLAGS.config_file:
    if not values["output_dir"]:
      raise UserError("--output_dir is required (or a --config_file that names it)")
    return ExportConfig(**values)
  return ExportConfig.from_file(FLAGS.config_file, **values)


def main(argv):
  del argv
  config = config_from_flags()  # a bad flag or config file fails here, before TensorFlow loads
  from bert_keras.export.export_config import run_export
  summary = run_export(config)
  print(f"wrote {summary['output_dir']} ({summary['kind']}, task {summary['task']!r})")
  if "litert" in config.format:
    print(f"wrote {summary['output_dir'].rstrip('/')}/model.tflite")


if __name__ == "__main__":
  app.run(run_main(main), flags_parser=parse_flags)
