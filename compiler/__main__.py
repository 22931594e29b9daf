"""`python -m profilec`: the same as the `profilec` console script.

pyproject.toml's `[project.scripts]` entry is `profilec = "profilec.cli:run"`; this calls that
same function, so both spellings parse the same arguments and exit with the same codes.
"""

from __future__ import annotations

from .cli import run

if __name__ == "__main__":
    run()
