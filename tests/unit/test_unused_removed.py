"""What nothing used is gone, and what stays does what its docs say (issue 15 item 7)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from profilec import errors
from profilec.canary import dynamic, tree
from profilec.mounts.backends import load_catalog

ROOT = Path(__file__).resolve().parents[2]


def _subclasses(cls: type[errors.ProfilecError]) -> list[type[errors.ProfilecError]]:
    out: list[type[errors.ProfilecError]] = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_exit_codes_table_matches_the_errors_and_the_readme() -> None:
    importlib.import_module("profilec.run.session")  # CheckFailedError, imported when run runs
    codes = {c.exit_code for c in _subclasses(errors.ProfilecError)}
    codes |= {errors.ProfilecError.exit_code}
    assert codes - {70} <= set(errors.EXIT_CODES), "an error class whose code is undocumented"
    # 1 is also CheckFailedError's (`profilec run`'s check failed: nothing started)
    assert set(errors.EXIT_CODES) - codes == {0}, "a documented code no error class uses"
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("\n")
    start = readme.index("## Exit codes")
    rows = [
        int(m.group(1))
        for line in readme[start : start + 20]
        if (m := re.match(r"^\| (\d+) \|", line))
    ]
    assert rows == sorted(errors.EXIT_CODES), "README's exit-code table differs from EXIT_CODES"


def test_dynamic_canary_takes_the_writer_names_from_the_catalog() -> None:
    writer = load_catalog().backends["codex"].writer
    assert writer is not None
    names = {(f.role, f.where): f.name for f in writer.files}
    assert names[("temp", "vault")] == tree.TEMP_PREFIX + "XXXXXX"
    assert names[("lock", "vault")] == tree.LOCK_BESIDE_TARGET
    assert names[("lock", "home")] == tree.LOCK_IN_HOME
    for mod in (dynamic, tree):
        source = Path(mod.__file__ or "").read_text(encoding="utf-8")
        for name in names.values():  # no second spelling of a catalog name
            assert f'"{name}"' not in source and f'"{name.rstrip("X")}"' not in source
