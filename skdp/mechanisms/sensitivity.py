"""Sensitivity formulas, each written once.

Every function states the neighbouring relation it assumes and cites its source, and
has a brute-force test in ``tests/mechanisms/`` that enumerates neighbouring datasets
on a small domain and checks the bound (and its tightness where the spec says tight).

Add new formulas at the end of this file.
"""

from __future__ import annotations

__all__: list[str] = []
