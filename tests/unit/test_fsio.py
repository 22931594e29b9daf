"""Atomic output: replace regular files whole, never replace a device, FIFO or directory."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from profilec.errors import OutputError
from profilec.fsio import write_atomic


def test_regular_file_is_replaced_whole_and_no_temp_is_left(tmp_path: Path) -> None:
    target = tmp_path / "out.toml"
    target.write_bytes(b"old contents that are longer than the new ones\n")
    write_atomic(str(target), b"new\n", mode=0o600)
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.toml"]


def test_fifo_target_stays_a_fifo_and_receives_the_bytes(tmp_path: Path) -> None:
    # Stands in for /dev/null and /dev/stdout: renaming over such a node would replace it
    # with a regular file (as root this once turned the host's /dev/null into a file).
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    write_atomic(str(fifo), b"payload\n")
    thread.join(timeout=10)
    assert got == [b"payload\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_directory_target_is_an_output_error_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "adir"
    target.mkdir()
    with pytest.raises(OutputError) as err:
        write_atomic(str(target), b"x")
    assert err.value.exit_code == 6
    assert list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]


def test_missing_directory_is_an_output_error(tmp_path: Path) -> None:
    with pytest.raises(OutputError):
        write_atomic(str(tmp_path / "no" / "such" / "out.json"), b"x")
