"""Creates BERT pretraining TFRecords from a text corpus with an Apache Beam pipeline.

Defaults: the embedded shortened English Wikipedia dump, the real uncased vocabulary, the paper's
phase-1 parameters, the DirectRunner multi-process on all cores. Any Beam option passes through:

  python scripts/create_pretraining_data.py --output_dir=out/pretraining
  python scripts/create_pretraining_data.py --input_files='corpus/*.txt' --input_format=bert_text \
      --output_dir=gs://bucket/pretraining --runner=DataflowRunner --project=P --region=R \
      --temp_location=gs://bucket/tmp --setup_file=./setup.py

Shards are published and summary.json (config, counts, mask ratios, dropped records) is written only
when the whole run succeeded. --config_file takes a JSON or YAML file of these flags by name, or a
run's summary.json (its "config" is the run's resolved flags); flags given override its values.
"""

import json

from absl import app

from bert_keras.errors import pass_flags_to_main, run_main


def main(argv):
  from bert_keras.data.beam_args import parse_pretraining_data_args  # pylint: disable=g-import-not-at-top
  parse_pretraining_data_args(argv[1:])  # --help and bad flags answer before Beam is imported
  from bert_keras.data.pretraining_data_pipeline import run  # pylint: disable=g-import-not-at-top
  summary = run(argv[1:])
  counts = {k: summary[k] for k in ("documents", "instances", "mask_ratio", "random_next_fraction", "dropped")}
  print(json.dumps(counts, sort_keys=True))


if __name__ == "__main__":
  # Flags are parsed by argparse in parse_args so that Beam's own options pass through untouched.
  app.run(run_main(main), flags_parser=pass_flags_to_main)
