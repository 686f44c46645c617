"""Reads Wikipedia XML dumps (.xml, .xml.bz2) into documents of plain-text sentences: "text
passages only, ignoring lists, tables, and headers" (section 3.1), one page in memory at a time.
"""

from __future__ import annotations

import io
import os
import re
import xml.etree.ElementTree as ET
from typing import BinaryIO, Callable, Iterator, List, Tuple

import apache_beam as beam

from bert_keras.data import beam_metrics
from bert_keras.data.corpus_text import split_sentences
from bert_keras.data.matched_files import ReadMatchingFiles, match_or_raise
from bert_keras.errors import UserError

# Sections after which an article holds no running text.
_END_SECTIONS = frozenset(["references", "external links", "see also", "further reading", "notes",
                           "bibliography", "sources", "footnotes", "citations", "notes and references"])
# Link namespaces whose targets are not text (images, categories, interlanguage links).
_NON_TEXT_LINK = re.compile(r"^\s*:?\s*(file|image|category|media|[a-z]{2,3}(-[a-z]+)?)\s*:", re.I)
# Paragraphs shorter than this many characters are captions, stubs of markup or list debris.
MIN_PARAGRAPH_CHARS = 20


def _local(tag: str) -> str:
  return tag.rsplit("}", 1)[-1]


def _not_a_dump(source: str, line: int, column: int) -> UserError:
  return UserError(f"{source}: not a Wikipedia XML dump (line {line}, column {column})")


def iter_wiki_pages(f: BinaryIO, drop: Callable[..., None], source: str = "<dump>"
                    ) -> Iterator[Tuple[str, str, str]]:
  """Yields (page_id, title, wikitext) of a dump's articles, streaming; redirects, other
  namespaces and empty pages are `drop(reason, "page <id>")`ped. Not a MediaWiki export: UserError
  naming `source`, line and column; a dump breaking off after its first page keeps the pages
  before and drops "wiki_truncated_dump" (a run of many files goes on)."""
  pages = 0
  context = ET.iterparse(f, events=("start", "end"))
  try:
    _, root = next(context)
    if _local(root.tag) != "mediawiki":
      raise _not_a_dump(source, 1, 1)
    title = page_id = ns = text = None
    redirect = False
    depth = 0  # depth inside <page>: the page id is the <id> directly under <page>, not a revision's
    for event, elem in context:
      tag = _local(elem.tag)
      if event == "start":
        if tag == "page":
          title = page_id = ns = text = None
          redirect = False
          depth = 0
        depth += 1
        continue
      depth -= 1
      if tag == "title":
        title = elem.text or ""
      elif tag == "ns":
        ns = (elem.text or "").strip()
      elif tag == "id" and depth == 1 and page_id is None:
        page_id = (elem.text or "").strip()
      elif tag == "redirect":
        redirect = True
      elif tag == "text":
        text = elem.text or ""
      elif tag == "page":
        pages += 1
        if redirect:
          drop("wiki_redirect", f"page {page_id}")
        elif ns != "0":
          drop("wiki_non_article_namespace", f"page {page_id}")
        elif not text or not text.strip():
          drop("wiki_empty_page", f"page {page_id}")
        else:
          yield page_id, title, text
        root.clear()  # Free the finished page: memory stays at one page.
  except ET.ParseError as e:
    line, column = e.position
    if pages == 0:
      raise _not_a_dump(source, line, column + 1) from None
    drop("wiki_truncated_dump", line)
  except (EOFError, OSError) as e:  # a bz2 stream ending early; not bz2 data behind a .bz2 name
    if pages == 0:
      raise (_not_a_dump(source, 1, 1) if isinstance(e, EOFError)
             else UserError(f"{source}: not a Wikipedia XML dump ({e})")) from None
    drop("wiki_truncated_dump", f"after {pages} pages")


def check_dump_head(path: str, open_file: Callable[[str], BinaryIO], head_bytes: int = 1 << 16) -> None:
  """UserError when `path` is not a MediaWiki XML export, when the graph is built: a file of at
  most `head_bytes` is parsed whole, of a larger one only the head."""
  chunks, size = [], 0
  with open_file(path) as f:
    try:
      while size <= head_bytes:
        chunk = f.read(1 << 13)
        if not chunk:
          break
        chunks.append(chunk)
        size += len(chunk)
    except EOFError as e:  # a truncated compressed stream: check what it holds, if anything
      if not chunks:
        raise UserError(f"{path}: not a Wikipedia XML dump (compressed data ends early: {e})") from None
    except OSError as e:
      raise UserError(f"{path}: not a Wikipedia XML dump ({e})") from None
  data = b"".join(chunks)
  if size <= head_bytes:
    for _ in iter_wiki_pages(io.BytesIO(data), lambda reason, where=None: None, path):
      pass
    return
  parser = ET.XMLPullParser(events=("start",))
  try:
    parser.feed(data)
  except ET.ParseError as e:
    line, column = e.position
    raise _not_a_dump(path, line, column + 1) from None
  for _, elem in parser.read_events():
    if _local(elem.tag) != "mediawiki":
      break
    return
  raise _not_a_dump(path, 1, 1)


def _strip_nodes(wikicode) -> None:
  """Removes top-level headings, tables, lists, refs, non-text links and the end sections, in one
  pass (`Wikicode.remove` searches the tree per call: quadratic)."""
  from mwparserfromhell import nodes  # pylint: disable=g-import-not-at-top

  kept = []
  for node in wikicode.nodes:
    if isinstance(node, nodes.Heading):
      if node.title.strip_code().strip().lower() in _END_SECTIONS:
        break
      continue
    if isinstance(node, nodes.Tag) and str(node.tag).lower() in ("table", "li", "dt", "dd", "ref", "gallery"):
      continue
    if isinstance(node, nodes.Wikilink) and _NON_TEXT_LINK.match(str(node.title)):
      continue
    kept.append(node)
  wikicode.nodes = kept


_REFS = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?</ref>|<!--.*?-->", re.S | re.I)
_LIST_LINE = re.compile(r"^[*#:;].*$", re.M)
# Markup that survives only in malformed wikitext; such a paragraph is dropped rather than kept broken.
_LEFT_OVER_MARKUP = re.compile(r"\[\[|\]\]|\{\{|\}\}|<ref|</ref|\{\||\|\}")


def wikitext_to_paragraphs(wikitext: str) -> List[str]:
  """Plain-text paragraphs of an article's wikitext (no markup, lists, tables, headings or refs)."""
  import mwparserfromhell  # pylint: disable=g-import-not-at-top

  wikicode = mwparserfromhell.parse(_LIST_LINE.sub("", _REFS.sub("", wikitext)))
  _strip_nodes(wikicode)
  text = wikicode.strip_code(normalize=True, collapse=True, keep_template_params=False)
  paragraphs = []
  for block in re.split(r"\n\s*\n|\n", text):
    block = " ".join(block.split())
    # Left-over markup: bold/italic quotes, empty parentheses from removed templates.
    block = re.sub(r"'{2,}", "", block)
    block = re.sub(r"\(\s*[,;]?\s*\)", "", block)
    block = " ".join(block.split())
    if (len(block) >= MIN_PARAGRAPH_CHARS and not block.startswith(("|", "{", "!"))
        and not _LEFT_OVER_MARKUP.search(block)):
      paragraphs.append(block)
  return paragraphs


def wiki_page_to_document(page: Tuple[str, str, str], source: str, drop: Callable[..., None]):
  """(page_id, title, wikitext) -> [(doc_id, sentences)], or [] (`drop`ped) when no text is left."""
  page_id, _, wikitext = page
  sentences = []
  for paragraph in wikitext_to_paragraphs(wikitext):
    sentences.extend(split_sentences(paragraph))
  if not sentences:
    drop("wiki_no_text_after_markup", f"page {page_id}")
    return []
  return [(f"{source}:{page_id}", sentences)]


class _ReadWikiPages(beam.DoFn):

  def setup(self):
    self._drops = beam_metrics.FirstDrops()

  def process(self, readable_file):
    source = os.path.basename(readable_file.metadata.path)
    with readable_file.open() as f:
      for page in iter_wiki_pages(f, self._drops.dropper(source), source):
        yield source, page


class _PagesToDocuments(beam.DoFn):

  def setup(self):
    self._drops = beam_metrics.FirstDrops()

  def process(self, source_and_page):
    source, page = source_and_page
    yield from wiki_page_to_document(page, source, self._drops.dropper(source))


class ReadWikipediaDump(beam.PTransform):
  """(doc_id "<dump file>:<page id>", sentences) of the articles of the matching dumps: pages
  streamed in one worker per file, then spread over all for the slower markup parsing."""

  def __init__(self, file_pattern: str):
    super().__init__()
    self._file_pattern = file_pattern

  def expand(self, pbegin):
    from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top

    for metadata in match_or_raise(self._file_pattern):
      check_dump_head(metadata.path, FileSystems.open)
    return (pbegin
            | "MatchedFiles" >> ReadMatchingFiles(self._file_pattern)
            | "StreamPages" >> beam.ParDo(_ReadWikiPages())
            | "SpreadPages" >> beam.Reshuffle()
            | "PagesToDocuments" >> beam.ParDo(_PagesToDocuments()))
