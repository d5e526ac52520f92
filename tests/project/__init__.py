"""Repository-wide checks: import layers, citations, workflows, CLI help, committed floors."""
