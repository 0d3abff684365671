"""The endpoint as the `mockbroker` command serves it: `--http-port` brings the console and the JSON API
up; without it aiohttp is never imported, so start-up does not pay for it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

TIMEOUT_S = 60


def test_without_the_http_port_aiohttp_is_not_imported() -> None:
    code = ("import sys, mockbroker.cli, mockbroker.server, mockbroker.pytest_plugin; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'yarl', 'multidict')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S, check=True)
    assert out.stdout.strip() == "[]"


def test_the_command_serves_the_console_and_the_api() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--no-env", "--port", "0", "--http-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = None
        for _ in range(10):  # the listening line, then the endpoint's
            line = proc.stdout.readline()
            if line.startswith("mockbroker control endpoint on "):
                url = line.split(" on ", 1)[1].strip()
                break
        assert url is not None
        html = urllib.request.Request(url + "/", headers={"Accept": "text/html"})
        with urllib.request.urlopen(html, timeout=TIMEOUT_S) as resp:
            assert resp.headers["Content-Type"].startswith("text/html") and b"/console/app.js" in resp.read()
        with urllib.request.urlopen(url + "/health", timeout=TIMEOUT_S) as resp:
            assert json.load(resp)["status"] == "ok"
        req = urllib.request.Request(url + "/events", method="POST")
        try:
            urllib.request.urlopen(req, timeout=TIMEOUT_S)
            raise AssertionError("POST /events was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 405 and exc.headers["Allow"] == "GET, HEAD"
    finally:
        proc.terminate()
        try:
            proc.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(TIMEOUT_S)
        if proc.stdout is not None:
            proc.stdout.close()
