"""`python -m profilec.cli`: the same as the `profilec` console script (`profilec.cli:run`)."""

from __future__ import annotations

from . import run

if __name__ == "__main__":
    run()
