"""Versioned JSON results, charts and markdown reports."""
