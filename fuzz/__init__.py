"""fuzz — Hypothesis program generation, campaigns, minimization, reports, the CLI and the pytest
plugin: the part of scopefuzz that compares the oracle (``oracle``) with a backend (``hw``)."""
