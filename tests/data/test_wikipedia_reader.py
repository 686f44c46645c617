"""The Wikipedia dump reader: the exact export layout (.xml, .xml.bz2) and the real shortened dump."""

import bz2
import collections
import os
import re

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from bert_keras import resources
from bert_keras.data import beam_metrics
from bert_keras.data.wikipedia_reader import (ReadWikipediaDump, iter_wiki_pages, wiki_page_to_document,
                                              wikitext_to_paragraphs)

# The MediaWiki export-0.10 layout, as in enwiki-*-pages-articles*.xml.
DUMP = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname></siteinfo>
  <page>
    <title>AccessibleComputing</title><ns>0</ns><id>10</id>
    <redirect title="Computer accessibility" />
    <revision><id>631144794</id><text xml:space="preserve">#REDIRECT [[Computer accessibility]]</text></revision>
  </page>
  <page>
    <title>Wikipedia:About</title><ns>4</ns><id>11</id>
    <revision><id>5</id><text xml:space="preserve">This page is about the project itself.</text></revision>
  </page>
  <page>
    <title>Test article</title><ns>0</ns><id>12</id>
    <revision><id>99</id><contributor><username>X</username><id>7</id></contributor>
      <text xml:space="preserve">{{Infobox thing|name=Test}}
'''Test article''' is a [[thing|small thing]] used in tests.&lt;ref&gt;A citation.&lt;/ref&gt; It has two sentences.
[[File:Picture.jpg|thumb|A caption that is not text.]]

== History ==
The history section is prose too. It was written in 2024.
* a list item that is dropped
{| class="wikitable"
| cell || cell
|}

== References ==
{{Reflist}}
Everything here is dropped.
[[Category:Tests]]</text></revision>
  </page>
  <page>
    <title>Empty</title><ns>0</ns><id>13</id><revision><id>1</id><text xml:space="preserve" /></revision>
  </page>
</mediawiki>
"""

EXPECTED = ["Test article is a small thing used in tests.", "It has two sentences.",
            "The history section is prose too.", "It was written in 2024."]


def test_pages_are_streamed_and_filtered():
  import io
  drops = collections.Counter()
  pages = list(iter_wiki_pages(io.BytesIO(DUMP.encode()), lambda r, where=None: drops.update([r])))
  assert [(p[0], p[1]) for p in pages] == [("12", "Test article")]
  assert drops == {"wiki_redirect": 1, "wiki_non_article_namespace": 1, "wiki_empty_page": 1}
  assert wiki_page_to_document(pages[0], "dump.xml", None) == [("dump.xml:12", EXPECTED)]


def test_markup_is_removed():
  paragraphs = wikitext_to_paragraphs("'''Bold''' and ''italic'' [[Link|text]] with {{cite|x}} a [[Category:C]]"
                                      " template and [http://example.com an external link].")
  assert paragraphs == ["Bold and italic text with a template and an external link."]


@pytest.mark.parametrize("name", ["dump.xml", "dump.xml.bz2"])
def test_ptransform_reads_xml_and_bz2(tmp_path, name):
  data = DUMP.encode()
  (tmp_path / name).write_bytes(bz2.compress(data) if name.endswith(".bz2") else data)
  with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
    docs = p | ReadWikipediaDump(str(tmp_path / name))
    assert_that(docs, equal_to([(f"{name}:12", EXPECTED)]))


def test_real_dump_pages():
  drops = collections.Counter()
  with bz2.open(resources.wikipedia_dump_path()) as f:
    pages = list(iter_wiki_pages(f, lambda r, where=None: drops.update([r])))
  # 206 pages: 100 redirects, 106 articles (DATA.md).
  assert len(pages) == 106 and drops == {"wiki_redirect": 100}
  titles = {p[1] for p in pages}
  assert {"Anarchism", "Autism", "Albedo"} <= titles and "AccessibleComputing" not in titles
  anarchism = next(p for p in pages if p[1] == "Anarchism")
  (doc_id, sentences), = wiki_page_to_document(anarchism, "enwiki.xml.bz2", None)
  assert doc_id == "enwiki.xml.bz2:12"
  assert sentences[0] == ("Anarchism is a political philosophy that advocates self-governed societies "
                          "based on voluntary institutions.")
  assert len(sentences) > 200 and not any("[[" in s or "{{" in s or "<ref" in s for s in sentences)


@pytest.mark.slow
def test_ptransform_on_the_real_dump():
  p = test_pipeline.TestPipeline(runner="FnApiRunner")
  docs = p | ReadWikipediaDump(resources.wikipedia_dump_path())
  lengths = docs | beam.Map(lambda d: len(d[1])) | beam.combiners.ToList()

  def check(actual):
    (sentence_counts,) = actual
    # Nearly every article gives a document (list-only stubs are dropped), most of many sentences.
    assert 100 <= len(sentence_counts) <= 106 and min(sentence_counts) >= 1
    assert sum(n > 3 for n in sentence_counts) >= 90 and sum(sentence_counts) > 15000

  assert_that(lengths, check)
  result = p.run()
  result.wait_until_finish()
  counters = beam_metrics.query_counters(result)
  assert counters["dropped.wiki_redirect"] == 100
  assert counters.get("dropped.wiki_no_text_after_markup", 0) <= 6
  first = beam_metrics.query_first_drops(result)["wiki_redirect"]
  assert re.fullmatch(re.escape(os.path.basename(resources.wikipedia_dump_path())) + r":page \d+",
                      first), first


@pytest.mark.parametrize("data, where", [
    (b"", "(line 1, column 1)"),
    (b"just some text\n", "(line 1, column 1)"),
    (b"<mediawiki><page><title>x</ti", "(line 1, column 26)"),  # truncated before any page ends
    (b"<html><body>not a dump</body></html>", "(line 1, column 1)"),
    (b"\n\n<mediawiki>\n  <page>& broken", "(line 4, column 10)"),
])
@pytest.mark.parametrize("compress", [False, True])
def test_not_a_dump_is_a_user_error(tmp_path, data, where, compress):
  from bert_keras.errors import UserError
  name = "dump.xml.bz2" if compress else "dump.xml"
  path = tmp_path / name
  path.write_bytes(bz2.compress(data) if compress else data)
  message = f"{path}: not a Wikipedia XML dump {where}"
  with pytest.raises(UserError) as e:  # when the pipeline is built, before any worker runs
    ReadWikipediaDump(str(path)).expand(beam.Pipeline() | beam.Impulse())
  assert str(e.value) == message
  with pytest.raises(UserError) as e:  # and by the streaming parser itself
    with bz2.open(path) if compress else open(path, "rb") as f:
      list(iter_wiki_pages(f, lambda r, where=None: None, str(path)))
  assert str(e.value) == message


def test_not_bz2_data_is_a_user_error(tmp_path):
  from bert_keras.errors import UserError
  path = tmp_path / "dump.xml.bz2"
  path.write_bytes(DUMP.encode())
  with pytest.raises(UserError, match="dump.xml.bz2: not a Wikipedia XML dump"):
    ReadWikipediaDump(str(path)).expand(beam.Pipeline() | beam.Impulse())


def test_truncated_tail_keeps_pages_and_is_counted(tmp_path):
  data = DUMP.encode()
  (tmp_path / "dump.xml").write_bytes(data[:data.index(b"<title>Empty")])  # inside the last page
  p = test_pipeline.TestPipeline(runner="FnApiRunner")
  docs = p | ReadWikipediaDump(str(tmp_path / "dump.xml"))
  assert_that(docs, equal_to([("dump.xml:12", EXPECTED)]))
  result = p.run()
  result.wait_until_finish()
  counters = beam_metrics.query_counters(result)
  assert counters["dropped.wiki_truncated_dump"] == 1 and counters["dropped.wiki_redirect"] == 1
  assert counters["dropped.wiki_non_article_namespace"] == 1
  # Where each reason first dropped something: the page, and the line where the dump breaks off.
  last_line = data[:data.index(b"<title>Empty")].count(b"\n") + 1
  assert beam_metrics.query_first_drops(result) == {
      "wiki_redirect": "dump.xml:page 10", "wiki_non_article_namespace": "dump.xml:page 11",
      "wiki_truncated_dump": f"dump.xml:{last_line}"}


def test_truncated_bz2_block_is_a_user_error(tmp_path):
  # bz2 decodes whole 900 kB blocks: a small dump cut short has no readable data at all.
  from bert_keras.errors import UserError
  path = tmp_path / "dump.xml.bz2"
  path.write_bytes(bz2.compress(DUMP.encode())[:-20])
  with pytest.raises(UserError, match="dump.xml.bz2: not a Wikipedia XML dump"):
    ReadWikipediaDump(str(path)).expand(beam.Pipeline() | beam.Impulse())
