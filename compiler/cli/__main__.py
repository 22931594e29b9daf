"""`python -m profilec.cli`: the same as the `profilec` console script."""

from __future__ import annotations

from . import run

run()
