"""Text, CSV and TFRecord readers on damaged files: undecodable bytes name the line they are on, an
unclosed CSV quote names the line where its row starts, empty Lee documents are refused, corrupt
TFRecords and records that are not tf.train.Example are one-line UserErrors (not tracebacks)."""

from tests.reliability import bad_inputs as B


# --- read_lines (open bug 6) ----------------------------------------------------------------------

def test_read_lines_names_the_line_of_an_undecodable_byte(tmp_path):
  from bert_keras.tasks.readers import read_lines
  lines = [f"line {i}" for i in range(5000)]  # ~50 KB: the error surfaces in a later decode chunk
  data = ("\n".join(lines[:3]) + "\n").encode() + b"bad \xff byte\n" + "\n".join(lines).encode()
  path = B.write(str(tmp_path / "train.tsv"), data)
  B.raises(lambda: list(read_lines(path)), f"{path}:4: not valid utf-8", "at byte 4 of the line")
  late = B.write(str(tmp_path / "late.tsv"), "\n".join(lines).encode() + b"\n\xc3(\n")
  B.raises(lambda: list(read_lines(late)), f"{late}:5001: not valid utf-8")


def test_glue_reader_names_the_line(tmp_path):
  from bert_keras.tasks.registry import get_task
  from bert_keras.configs.tasks import get_task_config
  B.write(str(tmp_path / "train.tsv"), B.mrpc_rows(["1", "0"]).encode() + b"1\t1\t2\t\xe9t\xe9\tb\n")
  B.raises(lambda: get_task(get_task_config("glue/mrpc")).read_examples(str(tmp_path), "train"),
          "train.tsv:4: not valid utf-8")


# --- SWAG CSV (open bug 4) ------------------------------------------------------------------------

def test_swag_invalid_utf8_names_the_line(tmp_path):
  from bert_keras.tasks import swag
  path = B.write(str(tmp_path / "val.csv"), B.swag_rows(2).encode() + b"9,v,0,x,\xff,s,g,a,b,c,d,1\n")
  B.raises(lambda: swag.read_swag(path, require_label=True), f"{path}:4: not valid UTF-8")


def test_swag_unclosed_quote_over_the_field_limit(tmp_path):
  from bert_keras.tasks import swag
  path = B.write(str(tmp_path / "val.csv"), B.swag_rows(2) + '9,v,0,"' + "a" * 140000 + "\n")
  B.raises(lambda: swag.read_swag(path, require_label=True), f"{path}:4: not a valid CSV row",
          "field larger than field limit", "balanced double quotes")


# --- Lee similarity (open bug 5) ------------------------------------------------------------------

def test_lee_empty_files(tmp_path):
  from bert_keras.tasks.registry import get_task
  from bert_keras.configs.tasks import get_task_config
  B.write(str(tmp_path / "lee.cor"), "")
  B.write(str(tmp_path / "similarities0-1.txt"), "")
  task = get_task(get_task_config("lee_similarity"))
  B.raises(lambda: task.read_examples(str(tmp_path), "train"), "lee.cor: no documents",
          "one document per line")
  B.write(str(tmp_path / "lee.cor"), "only one\n")
  B.raises(lambda: task.read_examples(str(tmp_path), "train"), "lee.cor: only 1 document")
  B.write(str(tmp_path / "lee.cor"), "one\ntwo\n")
  B.write(str(tmp_path / "similarities0-1.txt"), "1\t0.5\n0.5\t1\n")
  (pair,) = task.read_examples(str(tmp_path), "train") + task.read_examples(str(tmp_path), "dev")
  assert pair.label == 0.5


# --- pretraining TFRecords (open bug 7) -----------------------------------------------------------

def test_pretraining_input_corrupt_tfrecord(tmp_path):
  from bert_keras.training.pretraining_input import check_record_shapes
  path = B.write(str(tmp_path / "zeros.tfrecord"), b"\0" * 64)
  B.raises(lambda: check_record_shapes([path], 64, 10), f"{path}: corrupt TFRecord file")
  gz = B.write(str(tmp_path / "bad.tfrecord.gz"), b"not gzip at all")
  B.raises(lambda: check_record_shapes([gz], 64, 10), f"{gz}: corrupt TFRecord file")


def test_pretraining_input_record_that_is_not_an_example(tmp_path):
  import tensorflow as tf
  from bert_keras.training.pretraining_input import check_record_shapes
  path = str(tmp_path / "text.tfrecord")
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(b"\xff\xff\xff plain text, not a serialized proto")
  B.raises(lambda: check_record_shapes([path], 64, 10), f"{path}: record 1 is not a tf.train.Example")
