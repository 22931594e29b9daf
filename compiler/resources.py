"""The data profilec ships: reviewed policy, JSON Schemas and the canary seccomp profile.

They live in the top-level `profiles/`, `schemas/` and `canaries/` folders of the source tree and
are reached through `data/` inside the package (symlinks in a checkout; real files in a wheel,
copied from the same folders at build time), always through `importlib.resources`, so a checkout,
an editable install and a wheel read the same bytes. A missing data file is exit 7 (the install
is incomplete), never "a probe failed".
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import EnvironmentMissingError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from referencing import Registry

#: Every shipped schema's `$id` is this prefix + its file name without `.schema.json`
#: (`urn:profilec:schema:roots-manifest` is `schemas/roots-manifest.schema.json`). A URN names a
#: schema without pointing at a host: nothing can ever fetch it, so a validator resolves a `$ref`
#: through `schema_registry()` (the files in this package) or fails; it never reaches a network.
SCHEMA_ID_PREFIX = "urn:profilec:schema:"
SCHEMA_SUFFIX = ".schema.json"
#: In a model's JSON Schema, `{PUBLISHED_REF: "<file>.schema.json"}` stands for a member that is
#: another published document; profilec.schemagen writes it as `{"$ref": <that schema's $id>}`
#: (pydantic resolves every `$ref` it sees against its own definitions, so it cannot carry one).
PUBLISHED_REF = "x-profilec-published"


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


def schema_id(file_name: str) -> str:
    """The `$id` of `schemas/<file_name>` (e.g. `roots-manifest.schema.json`)."""
    if not file_name.endswith(SCHEMA_SUFFIX) or "/" in file_name:
        raise ValueError(f"not a schema file name: {file_name!r}")
    return SCHEMA_ID_PREFIX + file_name.removesuffix(SCHEMA_SUFFIX)


def schema_file(uri: str) -> Path:
    """The shipped file a schema `$id` names; exit 7 when this install does not ship it."""
    name = uri.removeprefix(SCHEMA_ID_PREFIX)
    if not uri.startswith(SCHEMA_ID_PREFIX) or not name or "/" in name or name.startswith("."):
        raise EnvironmentMissingError(
            "not a profilec schema id", where=uri, hint=f"ids start with {SCHEMA_ID_PREFIX}"
        )
    return shipped("schemas", name + SCHEMA_SUFFIX)


def load_schema(file_name: str) -> dict[str, Any]:
    """The parsed shipped schema `schemas/<file_name>`."""
    doc: dict[str, Any] = json.loads(shipped("schemas", file_name).read_text(encoding="utf-8"))
    return doc


@cache
def schema_registry() -> Registry:
    """Every shipped schema under its `$id`, and nothing else: an unknown URI is unresolvable
    (no retrieval, so a `$ref` never reaches the network). jsonschema adds the draft
    meta-schemas it bundles itself."""
    from referencing import Registry, Resource
    from referencing.exceptions import NoSuchResource
    from referencing.jsonschema import DRAFT202012

    def offline(uri: str) -> Resource[Any]:
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]

    entries = []
    for path in sorted(schemas_dir().glob("*" + SCHEMA_SUFFIX)):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("$id") != schema_id(path.name):
            raise EnvironmentMissingError(
                "shipped schema carries another $id",
                where=str(path),
                hint=f"expected {schema_id(path.name)}; reinstall profilec",
            )
        entries.append((doc["$id"], DRAFT202012.create_resource(doc)))
    registry: Registry = Registry(retrieve=offline).with_resources(entries)  # type: ignore[call-arg]
    return registry.crawl()


def validator(file_name: str) -> Draft202012Validator:
    """A draft 2020-12 validator for `schemas/<file_name>` resolving `$ref`s offline."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(file_name), registry=schema_registry())
