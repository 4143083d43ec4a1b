"""Markdown for people: the rules pages and the descriptions shown by ``/docs``."""

from __future__ import annotations

import functools

from markdown_it import MarkdownIt
from markupsafe import Markup


@functools.cache
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_html(text: str) -> Markup:
    """Markdown → HTML: CommonMark with tables; raw HTML in the source is escaped, never passed through."""
    return Markup(_markdown().render(text))
