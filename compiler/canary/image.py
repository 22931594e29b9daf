"""The canary image: `FROM scratch` plus Debian's static busybox, tagged by its context's hash."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

from profilec.errors import EnvironmentMissingError

if TYPE_CHECKING:
    from docker import DockerClient

#: Where Debian's `busybox-static` puts its binary (apt-get install busybox-static).
BUSYBOX = Path("/bin/busybox")
#: The image repository name; the tag is the first 16 hex digits of the context's sha256.
REPOSITORY = "profilec-canary"
#: The label every canary image carries (containers add their own run label).
IMAGE_LABEL = "profilec.canary"

DOCKERFILE = f"""\
FROM scratch
COPY busybox /bin/busybox
COPY passwd group /etc/
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN ["/bin/busybox", "mkdir", "-p", "/tmp", "/work", "/codex-home", "/opt/codex", "/root"]
RUN ["/bin/busybox", "chmod", "1777", "/tmp"]
LABEL {IMAGE_LABEL}="1"
ENV PATH=/bin HOME=/root
WORKDIR /work
"""

PASSWD = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"


def _context_files(busybox: Path = BUSYBOX) -> list[tuple[str, int, bytes]]:
    """The context's files as (name, mode, bytes), sorted by name."""
    try:
        bb = busybox.read_bytes()
    except OSError as exc:
        raise EnvironmentMissingError(
            f"cannot read {busybox}: {exc.strerror}", hint="apt-get install busybox-static"
        ) from exc
    files = [
        ("Dockerfile", 0o644, DOCKERFILE.encode()),
        ("busybox", 0o755, bb),
        ("group", 0o644, GROUP.encode()),
        ("passwd", 0o644, PASSWD.encode()),
    ]
    return sorted(files)


def context_tar(busybox: Path = BUSYBOX) -> bytes:
    """The build context as a byte-for-byte reproducible tar (fixed owner, mode and mtime)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, mode, data in _context_files(busybox):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def context_digest(busybox: Path = BUSYBOX) -> str:
    """The sha256 (hex) of the build context's bytes."""
    return hashlib.sha256(context_tar(busybox)).hexdigest()


def ensure_image(client: DockerClient, busybox: Path = BUSYBOX) -> str:
    """Build the canary image unless its tag already exists; return the tag (never pulls)."""
    import docker.errors

    context = context_tar(busybox)
    tag = f"{REPOSITORY}:{hashlib.sha256(context).hexdigest()[:16]}"
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.build(
            fileobj=io.BytesIO(context),
            custom_context=True,
            tag=tag,
            labels={IMAGE_LABEL: "1"},
            pull=False,
            rm=True,
            forcerm=True,
            network_mode="none",
        )
    except (docker.errors.BuildError, docker.errors.APIError) as exc:
        raise EnvironmentMissingError(f"canary image build failed: {exc}") from exc
    return tag
