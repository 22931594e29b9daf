"""Properties of the session allow-list over random agent configs."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from profilec.errors import InputError
from profilec.session import CLASSES, KNOWN_KEYS, load_allowlist, parse_session_bytes, sanitize_with

ALLOW = load_allowlist()
KEYS = st.one_of(
    st.sampled_from(sorted(KNOWN_KEYS)),
    st.text(min_size=1, max_size=12),
    st.sampled_from(["mcp_servers.x.command", "notify.0", "model.x"]),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=12))
def test_every_key_is_kept_or_stripped_once_and_only_allowed_keys_survive(
    config: dict[str, Any],
) -> None:
    clean, stripped = sanitize_with(config, ALLOW)
    assert set(clean) | {s.path for s in stripped} == set(config)
    assert not set(clean) & {s.path for s in stripped}
    assert set(clean) <= set(ALLOW.allowed)
    assert all(KNOWN_KEYS[k] is None for k in clean)
    assert all(s.cls in CLASSES for s in stripped)
    for s in stripped:
        head = s.path.split(".", 1)[0]
        known = KNOWN_KEYS.get(head)
        if head in ALLOW.allowed:
            # An allowed key stripped is a value of another type, said as such.
            assert s.cls == "wrong-type"
            assert s.why is not None and s.why.startswith(f"key {head!r} is allowed but must be")
        else:
            assert s.cls == (known if known is not None else "unknown") and s.why is None


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1, max_value=3000))
@example(64).via("the boundary: 64 levels parse (a scalar leaf once counted as a 65th)")
@example(65).via("the first depth refused")
def test_any_depth_parses_or_is_an_input_error(depth: int) -> None:
    raw = ('{"a":' * depth + "1" + "}" * depth).encode()
    try:
        data = parse_session_bytes(raw, where="s")
    except InputError:
        assert depth > 64
    else:
        assert depth <= 64 and json.dumps(data)
