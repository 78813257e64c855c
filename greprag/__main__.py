"""``python -m greprag`` runs the CLI."""

from greprag.cli import main

main()
