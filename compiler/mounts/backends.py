"""The backend catalog (`profiles/backends.toml`): per-backend state knobs as reviewed data."""

from __future__ import annotations

import json

from pydantic import ValidationError

from ..errors import InputError, PolicyError
from ..inputs import Inputs
from ..models.mounts import BackendCatalog
from ..paths import check_segment
from ..readers import parse_toml, validation_message
from ..resources import shipped


def default_catalog_path() -> str:
    """The shipped catalog (package data, the source tree's `profiles/backends.toml`)."""
    return str(shipped("profiles", "backends.toml"))


def validate_catalog(catalog: BackendCatalog, *, where: str) -> BackendCatalog:
    """Rules the schema cannot say: knob xor reason, safe subpaths, unique rejected knobs,
    writer files as single safe names, a measured writer with its evidence."""
    for name, backend in catalog.backends.items():
        at = f"{where}: backends.{name}"
        if backend.writer is not None:
            seen_files: set[str] = set()
            for f in backend.writer.files:
                try:
                    check_segment(f.name, what="writer file name")
                except InputError as exc:
                    raise PolicyError(exc.message, where=f"{at}.writer.files") from None
                if f.name in seen_files:
                    raise PolicyError(f"writer file {f.name!r} listed twice", where=at)
                seen_files.add(f.name)
            if backend.writer.status == "measured" and (
                backend.writer.save == "unknown" or not backend.writer.evidence.strip()
            ):
                raise PolicyError(
                    "a measured writer pattern names its save kind and its evidence", where=at
                )
        if (backend.state_knob is None) == (backend.not_relocated_reason is None):
            raise PolicyError("set exactly one of state_knob and not_relocated_reason", where=at)
        if backend.state_knob is not None and backend.state_knob.subpath is not None:
            for seg in backend.state_knob.subpath.split("/"):
                check_segment(seg, what=f"{at}.state_knob.subpath")
        seen: set[tuple[str, str]] = set()
        for knob in backend.rejected_knobs:
            key = (knob.kind, knob.name)
            if key in seen:
                raise PolicyError(f"rejected knob {knob.name!r} listed twice", where=at)
            seen.add(key)
            if backend.state_knob is not None and key == (
                backend.state_knob.kind,
                backend.state_knob.name,
            ):
                raise PolicyError(f"{knob.name!r} is both the state knob and rejected", where=at)
    return catalog


def parse_catalog(data: bytes, *, where: str) -> BackendCatalog:
    """Parse and validate catalog bytes; unknown keys are errors."""
    doc = parse_toml(data, where=where)
    try:
        # JSON mode: strict, yet TOML arrays validate as the model's tuples.
        catalog = BackendCatalog.model_validate_json(json.dumps(doc))
    except ValidationError as exc:
        raise PolicyError(f"schema violation: {validation_message(exc)}", where=where) from None
    return validate_catalog(catalog, where=where)


def load_catalog(path: str | None = None) -> BackendCatalog:
    """The catalog outside a run: through an edge of its own."""
    return catalog_of(Inputs.unrooted(), path)


def catalog_of(inp: Inputs, path: str | None = None) -> BackendCatalog:
    """The catalog read through the run's edge (reviewed repo data, like profiles/*.toml, so
    no daemon trust check) and parsed (a plan reads it once: mounts.api.plan_inputs)."""
    where = path or default_catalog_path()
    return parse_catalog(inp.policy_file(where).data, where=where)
