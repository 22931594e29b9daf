"""The data profilec ships: reviewed policy, JSON Schemas and the canary seccomp profile.

They live in the top-level `profiles/`, `schemas/` and `canaries/` folders of the source tree and
are reached through `data/` inside the package (symlinks in a checkout; real files in a wheel,
copied from the same folders at build time), always through `importlib.resources`, so a checkout,
an editable install and a wheel read the same bytes. A missing data file is exit 7 (the install
is incomplete), never "a probe failed".
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .errors import EnvironmentMissingError


def data_dir() -> Path:
    """The package's `data/` directory on the file system."""
    root = files(__package__ or "profilec") / "data"
    if not isinstance(root, Path) or not root.is_dir():
        raise EnvironmentMissingError(
            "package data not found on the file system",
            where=str(root),
            hint="reinstall profilec from a wheel or sdist; zipped installs are not supported",
        )
    return root


def shipped(kind: str, name: str = "") -> Path:
    """`data/<kind>/<name>` (kind: profiles, schemas, canaries); exit 7 when it is missing."""
    path = data_dir() / kind / name if name else data_dir() / kind
    if not path.exists():
        raise EnvironmentMissingError(
            "shipped data file is missing", where=str(path), hint="reinstall profilec"
        )
    return path


def profiles_dir() -> str:
    """The shipped reviewed policy (`profiles/`)."""
    return str(shipped("profiles"))


def schemas_dir() -> Path:
    """The shipped JSON Schemas (`schemas/`)."""
    return shipped("schemas")
