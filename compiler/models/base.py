"""What every model builds on: `Frozen` (a validated model), `Built` (what profilec builds from
values already validated), and the field types several formats share.
"""

# No `from __future__ import annotations` here: pydantic would have to compile and evaluate
# every field's annotation string when each model class is created (on every compile, which
# validates these); the classes are defined before use, so no annotation needs deferring.

from collections.abc import Callable
from typing import Annotated, Any, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, StringConstraints

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
ModeName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
AbsPath = Annotated[str, StringConstraints(pattern=r"^/", min_length=1)]


def new_list() -> list[Any]:
    """An empty list, the default of a list field. A Python function, not `list`: pydantic reads
    a default factory's signature, and the first builtin's costs a tokenizer pass (~2 ms)."""
    return []


def new_dict() -> dict[str, Any]:
    """An empty dict, the default of a mapping field (a Python function, as `new_list`)."""
    return {}


class Frozen(BaseModel):
    """Base for all models: immutable, unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class _Shape(NamedTuple):
    """One Built class's fields: a dict of them in declaration order (the order validation
    fills `__dict__` in) holding each default, the required names, the default factories."""

    template: dict[str, Any]
    required: frozenset[str]
    factories: tuple[tuple[str, Callable[[], Any]], ...]


_SHAPES: dict[type, _Shape] = {}
_set = object.__setattr__


def _shape(cls: type[BaseModel]) -> _Shape:
    """`cls`'s _Shape, computed on first use."""
    template: dict[str, Any] = {}
    required: set[str] = set()
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        template[name] = None if info.is_required() else info.default
        if info.default_factory is not None:
            factories.append((name, cast("Callable[[], Any]", info.default_factory)))
        elif info.is_required():
            required.add(name)
    _SHAPES[cls] = shape = _Shape(template, frozenset(required), tuple(factories))
    return shape


class Built(Frozen):
    """Base of what profilec builds itself from values already validated at the edge: resolved
    roots and home, trusted paths, other identities, compiled entries and profiles, the bundle.

    Calling such a class builds the instance without pydantic's run-time validation. Every
    value in it is already typed: mypy --strict checks each call's field names and types, and
    the strings came from validated inputs or from lstat/readlink at the edge. Validating would
    first build each class's validator, in every process: about 7 ms of a 10-root
    `profilec compile` (docs/performance.md). A name that is no field, or a required field left
    out, is still a TypeError here.

    Reading one back (`model_validate`, `model_validate_json`: a bundle file) validates in full:
    `__pydantic_base_init__` tells pydantic this `__init__` is not a custom one, so its
    validator never calls it. tests/unit/test_built.py proves that a validated copy of every
    model a compile builds equals the original, field order included.
    """

    def __init__(self, **data: Any) -> None:
        shape = _SHAPES.get(type(self)) or _shape(type(self))
        values = shape.template.copy()
        values.update(data)  # a key already there keeps its place: declaration order
        if len(values) != len(shape.template) or not data.keys() >= shape.required:
            name = type(self).__name__
            unknown = sorted(set(data) - set(shape.template))
            if unknown:
                raise TypeError(f"{name}: no field named {', '.join(unknown)}")
            missing = sorted(shape.required - set(data))
            raise TypeError(f"{name}: missing field `{'`, `'.join(missing)}`")
        for key, factory in shape.factories:
            if key not in data:
                values[key] = factory()
        _set(self, "__dict__", values)
        _set(self, "__pydantic_fields_set__", set(data))
        _set(self, "__pydantic_extra__", None)
        _set(self, "__pydantic_private__", None)

    # pydantic's own marker for "not a custom __init__" (BaseModel.__init__ carries it): the
    # validator builds instances itself and never calls this one.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


#: One `codex -c` value: a dotted key of bare segments, `=`, a one-line TOML value (the
#: `overrides` format's lines, models/overrides.py, and acp-json's `configOverrides`).
OverrideLine = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*=[^\n]+$")
]
