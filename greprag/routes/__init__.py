"""Retrieval routes: each turns a plan (and local context) into candidates."""
