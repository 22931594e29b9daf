"""Drive one real Codex token refresh (stdlib only; runs inside a sandbox plan).

usage: python3 refresh_driver.py CODEX_BIN NEW_ACCESS_MARKER

Serves a loopback token endpoint, starts `codex app-server` with
CODEX_REFRESH_TOKEN_URL_OVERRIDE pointing at it, sends initialize / initialized /
`account/read {"refreshToken": true}`, and prints one JSON line: whether the token endpoint was
called and the account/read error, if any. The caller seeds CODEX_HOME/auth.json (see
`seed_chatgpt_auth`) and checks the real file afterwards. No real credential is involved: the
tokens are unsigned JWTs holding random markers.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unsigned_jwt(claims: dict[str, Any]) -> str:
    """An `alg: none` JWT (Codex parses, never verifies, the id/access tokens it holds); the
    signature segment must not be empty or Codex rejects the file."""
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}.c2ln"


def _claims(marker: str, exp: int) -> dict[str, Any]:
    return {
        "exp": exp,
        "iat": exp - 3600,
        "email": "canary@example.invalid",
        "sub": marker,
        "https://api.openai.com/auth": {
            "chatgpt_account_id": "acct-canary",
            "chatgpt_plan_type": "plus",
            "chatgpt_user_id": "user-canary",
        },
    }


def seed_chatgpt_auth(marker: str) -> str:
    """auth.json text of a ChatGPT login whose access token expired long ago."""
    old = 1_000_000_000
    doc = {
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": None,
        "tokens": {
            "id_token": unsigned_jwt(_claims(marker, old)),
            "access_token": unsigned_jwt(_claims(marker, old)),
            "refresh_token": "rt-" + marker,
            "account_id": "acct-canary",
        },
        "last_refresh": "2001-01-01T00:00:00Z",
    }
    return json.dumps(doc, indent=2) + "\n"


def main(argv: list[str]) -> int:
    codex, new_marker = argv[1], argv[2]
    hits: list[str] = []
    far = int(time.time()) + 30 * 86400

    class Token(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            hits.append(self.path)
            body = json.dumps(
                {
                    "id_token": unsigned_jwt(_claims(new_marker, far)),
                    "access_token": unsigned_jwt(_claims(new_marker, far)),
                    "refresh_token": "rt-" + new_marker,
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Token)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ)
    env["CODEX_REFRESH_TOKEN_URL_OVERRIDE"] = (
        f"http://127.0.0.1:{server.server_address[1]}/oauth/token"
    )
    proc = subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def reply(rid: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            if not line:
                return {"error": "app-server closed its output"}
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return dict(msg)

    result: dict[str, Any] = {}
    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "profilec-refresh", "version": "1"}},
            }
        )
        reply(1)
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send(
            {"jsonrpc": "2.0", "id": 2, "method": "account/read", "params": {"refreshToken": True}}
        )
        result = reply(2)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        server.shutdown()
    # The reply itself may fail later (workspace routing needs the real backend); the save
    # happened when the endpoint was called, which the caller checks in the real file.
    error = result.get("error")
    print(
        json.dumps(
            {
                "token_endpoint_hits": len(hits),
                "reply_error": error.get("message") if isinstance(error, dict) else error,
            },
            sort_keys=True,
        )
    )
    return 0 if hits else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
