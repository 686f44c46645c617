"""Corpus ingestion spec: source files in, a Corpus artifact (sharded BERT-layout text) out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Corpus


class CorpusIngestionSpec(ComponentSpec):
  """Reads Wikipedia dumps and text corpora with Beam into `corpus-SSSSS-of-NNNNN.txt` shards.

  Sources: Wikipedia XML dumps (.xml/.xml.bz2, articles only, section 3.1), corpora in the Google
  BERT layout (one sentence per line, blank line between documents) and one-document-per-line
  corpora (e.g. the Lee news corpus), each a path or glob.
  """

  OUTPUTS = {"corpus": Corpus}
  PARAMETERS = {
      "wikipedia_dumps": Parameter(list, [], is_path=True,
                                   doc="Wikipedia XML dumps (.xml, .xml.bz2), paths or globs."),
      "bert_text_corpora": Parameter(list, [], is_path=True,
                                     doc="Files in the Google BERT layout, paths or globs."),
      "line_corpora": Parameter(list, [], is_path=True,
                                doc="Files with one document per line, paths or globs."),
      "max_documents": Parameter(int, 0, doc="Keep this many documents (a stable slice); 0 = all."),
      "num_shards": Parameter(int, 2, doc="Output text shards."),
  }
  EXECUTOR = "components.corpus_ingestion.executor:CorpusIngestionExecutor"
  USES_BEAM = True
