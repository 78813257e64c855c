"""Docs mode: questions over mixed code and prose (API manuals). See docs/architecture.md."""
