"""Docs mode: plain-language questions over manuals and repositories that mix code and
documentation (``greprag search``, ``Retriever.search``).

Reading (``sections`` and one reader per format), understanding the question
(``keywords``, ``stem``, ``synonyms``, ``router``), searching (``units``, ``grep``,
``vectors``, ``search``) and the profile (``profile``). ``greprag`` loads this package
only when a question is asked or documentation is indexed. See docs/architecture.md.
"""
