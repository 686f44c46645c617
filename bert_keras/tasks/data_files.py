"""The files each task reads from `--data_dir`: one table for `run_finetuning --help` and the
README (imports nothing heavy, so `--help` stays fast)."""

_GLUE = "train.tsv, dev.tsv, test.tsv (the GLUE download's task folder; 'tfds:' reads tensorflow-datasets instead)"
_CONLL = ("train.txt, valid.txt, test.txt (or eng.train, eng.testa, eng.testb): token POS chunk "
          "NER per line, a blank line between sentences")

DATA_FILES = {
    **{f"glue/{name}": _GLUE for name in ("cola", "sst2", "mrpc", "stsb", "qqp", "qnli", "rte",
                                          "wnli")},
    "glue/mnli": ("train.tsv, dev_matched.tsv, dev_mismatched.tsv, test_matched.tsv, "
                  "test_mismatched.tsv, and for --mode=predict optionally the diagnostic set "
                  "AX.tsv ('tfds:' reads tensorflow-datasets instead)"),
    "squad_v1": "train-v1.1.json, dev-v1.1.json",
    "squad_v2": "train-v2.0.json, dev-v2.0.json",
    "swag": "train.csv, val.csv, test.csv (the official header)",
    "conll2003": _CONLL,
    "conll2003_feature_based": _CONLL,
    "polarity": "pang_lee_polarity.cor (__label__pos / __label__neg sentences; empty --data_dir: "
                "the embedded file)",
    "lee_similarity": "lee.cor, similarities0-1.txt (empty --data_dir: the embedded files)",
}


def data_files_help() -> str:
  """`task: files` for every task, one per line, for --help."""
  return "\n".join(f"  {task}: {files}" for task, files in sorted(DATA_FILES.items()))
