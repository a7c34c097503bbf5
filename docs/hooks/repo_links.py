"""MkDocs hook: links to repository files, resolved as in the repository.

Pages here show repository files: the front page is README.md and docs/reference/*.md are the
packages' READMEs, each included whole (`{% include-markdown "../../engine/README.md" %}`),
with their relative links rewritten by the include to the including page's place. After that
every relative link of a page is relative to the page's own place in the repository
(docs/<page>), so one rule serves every page:

- a link into docs/ is left alone (MkDocs checks it: a missing page or anchor fails the
  strict build);
- a link to a repository file that a page here includes whole goes to that page (its
  anchor kept);
- a link to any other repository file (a .py module, say) becomes its text: the site has no
  page for it, and the text names the file.
"""

from __future__ import annotations

import posixpath
import re

INCLUDE = re.compile(r"""\{%\s*include-markdown\s+["']([^"']+)["']""")
FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]+)\)")

_pages: dict[str, str] = {}  # repository path of an included file -> src_uri of its page


def _repo_path(src_uri: str) -> str:
    return posixpath.join("docs", src_uri)


def on_files(files, config):
    _pages.clear()
    for f in files.documentation_pages():
        text = f.content_string
        m = INCLUDE.search(text)
        if m:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(_repo_path(f.src_uri)), m.group(1)))
            _pages.setdefault(target, f.src_uri)
    return files


def rewrite(markdown: str, src_uri: str) -> str:
    """`markdown` of the page `src_uri` with its links to repository files outside docs/
    pointed at their pages, or turned into their text."""
    here = posixpath.dirname(_repo_path(src_uri))

    def fix(m: re.Match) -> str:
        bang, text, target = m.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
            return m.group(0)  # a URL, an anchor on this page or an absolute path
        path, _, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join(here, path))
        if repo.startswith("docs/"):
            return m.group(0)
        page = _pages.get(repo)
        if page is None:
            return text if not bang else f"`{repo}`"
        new = posixpath.relpath(page, posixpath.dirname(src_uri) or ".")
        return f"{bang}[{text}]({new}{'#' + anchor if anchor else ''})"

    out, prose, fenced = [], [], False
    for line in markdown.splitlines(keepends=True):
        if FENCE.match(line.lstrip()):
            if not fenced:
                out.append(_outside_code_spans("".join(prose), lambda s: LINK.sub(fix, s)))
                prose = []
            fenced = not fenced
            out.append(line)
        elif fenced:
            out.append(line)
        else:
            prose.append(line)
    out.append(_outside_code_spans("".join(prose), lambda s: LINK.sub(fix, s)))
    return "".join(out)


def _outside_code_spans(text: str, f) -> str:
    """f applied to `text` with its `code spans` (which may run over a line break) masked, so
    that nothing inside one is taken for a link; a link's text may hold a code span."""
    spans: list[str] = []

    def mask(m: re.Match) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], f(re.sub(r"`[^`]+`", mask, text)))


def on_page_markdown(markdown, page, config, files):
    return rewrite(markdown, page.file.src_uri)
