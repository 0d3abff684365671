"""The image itself: size, build time (cold and warm), start to listening and to healthy, idle RSS.

    scripts/docker-test --bench [--runs 5] [--no-cold]        (as root: a private dockerd, as for the tests)

Needs a Docker daemon at DOCKER_HOST and Debian's docker.io client (BuildKit); scripts/docker-test --bench
starts one, makes the base image, and runs this with those set. Measured:
- size: the image's size (`docker image inspect`), and each layer's share (`docker history`);
- cold build: `docker build` of docker/Dockerfile after `docker builder prune --all` (the base image stays:
  the wheels come from PyPI again, the Debian packages from the mirror again);
- warm build: the same build again, nothing changed (every layer cached);
- listening: from `docker run --detach` (the command's start) to the first ApiVersions answer on the
  listener from the host (polled every 5 ms), median of --runs;
- healthy: from `docker run --detach` to `docker inspect` reporting `healthy`, with the image's own
  HEALTHCHECK (interval 5 s: the first check runs 5 s after start) and with `--health-interval 1s`;
- idle RSS: VmRSS of the broker process (PID 1 in the container) one second after it answered;
- stop: how long `docker stop` (SIGTERM) takes, the exit code checked to be 0.
Every container uses the host's network and a free loopback port. Nothing is asserted: benchmarks measure.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCKER = os.environ.get("MOCKBROKER_TEST_DOCKER", "docker")
IMAGE = "mockbroker:bench"
BASE = os.environ.get("MOCKBROKER_DOCKER_BASE", "debian:bookworm-slim")
CA_BUNDLE = os.environ.get("MOCKBROKER_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
TIMEOUT_S = 120.0


def docker(*args: str, timeout: float = 600.0) -> str:
    proc = subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"docker {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


def build() -> float:
    args = ["build", "--quiet", "--network", "host", "--build-arg", f"BASE={BASE}", "-t", IMAGE,
            "-f", os.path.join(ROOT, "docker", "Dockerfile")]
    if os.path.exists(CA_BUNDLE):
        args += ["--secret", f"id=ca-bundle,src={CA_BUNDLE}"]
    started = time.monotonic()
    subprocess.run([DOCKER, *args, ROOT], check=True, capture_output=True, timeout=1200,
                   env={**os.environ, "DOCKER_BUILDKIT": "1"})
    return time.monotonic() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def api_versions_answers(port: int) -> bool:
    """An ApiVersions v0 round trip (header v1, empty body) on 127.0.0.1:port."""
    request = (18).to_bytes(2, "big") + (0).to_bytes(2, "big") + (1).to_bytes(4, "big") + (-1).to_bytes(2, "big", signed=True)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(len(request).to_bytes(4, "big") + request)
            return len(s.recv(4)) == 4
    except OSError:
        return False


def run_once(health_interval: str | None) -> tuple[float, float, int, float]:
    """Seconds to listening, seconds to healthy, idle VmRSS in kB, seconds `docker stop` took."""
    port, http = free_port(), free_port()
    options = ["--network", "host", "--name", f"mockbroker-bench-{uuid.uuid4().hex[:8]}",
               "--env", "MOCKBROKER_HOST=127.0.0.1", "--env", f"MOCKBROKER_PORT={port}",
               "--env", f"MOCKBROKER_HTTP_PORT={http}"]
    if health_interval:
        options += ["--health-interval", health_interval, "--health-start-period", "0s"]
    started = time.monotonic()
    cid = docker("run", "--detach", *options, IMAGE).strip()
    try:
        deadline = started + TIMEOUT_S
        while not api_versions_answers(port):
            if time.monotonic() > deadline:
                raise SystemExit("the broker did not answer")
            time.sleep(0.005)
        listening = time.monotonic() - started
        while json.loads(docker("inspect", "--format", "{{json .State.Health.Status}}", cid)) != "healthy":
            if time.monotonic() > deadline:
                raise SystemExit("the container did not turn healthy")
            time.sleep(0.05)
        healthy = time.monotonic() - started
        time.sleep(max(0.0, 1.0 - (time.monotonic() - started - listening)))
        status = docker("exec", cid, "cat", "/proc/1/status")
        rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        stop_started = time.monotonic()
        docker("stop", "--time", "30", cid)     # SIGTERM; SIGKILL only after 30 s
        stopped = time.monotonic() - stop_started
        exit_code = int(docker("inspect", "--format", "{{.State.ExitCode}}", cid))
        if exit_code != 0:
            raise SystemExit(f"docker stop: exit code {exit_code}")
        return listening, healthy, rss, stopped
    finally:
        docker("rm", "--force", cid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-cold", action="store_true", help="skip the cold build (no cache prune)")
    args = parser.parse_args()

    if not args.no_cold:
        docker("builder", "prune", "--all", "--force")
        print(f"cold build            {build():6.1f} s   (build cache pruned; base image kept)")
    else:
        build()
    print(f"warm build            {build():6.1f} s   (nothing changed)")
    size = int(json.loads(docker("image", "inspect", IMAGE))[0]["Size"])
    print(f"image size            {size / 1e6:6.1f} MB  ({BASE}: "
          f"{int(json.loads(docker('image', 'inspect', BASE))[0]['Size']) / 1e6:.1f} MB)")
    for line in docker("history", "--format", "{{.Size}}\t{{.CreatedBy}}", IMAGE).splitlines():
        size_text, created_by = line.split("\t", 1)
        if size_text not in ("0B", "0"):
            print(f"    layer {size_text:>8}  {created_by[:90]}")
    for interval in (None, "1s"):
        runs = [run_once(interval) for _ in range(args.runs)]
        label = "image HEALTHCHECK" if interval is None else f"--health-interval {interval}"
        print(f"[{label}] median of {args.runs}:")
        print(f"    start to listening  {statistics.median(r[0] for r in runs):6.2f} s")
        print(f"    start to healthy    {statistics.median(r[1] for r in runs):6.2f} s")
        print(f"    idle RSS (PID 1)    {statistics.median(r[2] for r in runs) / 1024:6.1f} MB")
        print(f"    docker stop         {statistics.median(r[3] for r in runs):6.2f} s   (exit code 0)")


if __name__ == "__main__":
    main()
