"""mockbroker as a package an index takes: the extras and the error a missing one gives, the metadata, and
(slow) the release check end to end: scripts/release builds the sdist and both wheels, and the pure wheel,
installed in a fresh venv, runs the README's first test from a directory with no clone in it."""

from __future__ import annotations

import importlib
import platform
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import mockbroker
from mockbroker.extras import EXTRAS, MissingExtraError, require

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def _names(requirements: list[str]) -> set[str]:
    """Distribution names of requirement strings ("aiohttp>=3.9" -> "aiohttp"), lower case."""
    out = set()
    for req in requirements:
        name = req
        for stop in "<>=![;~ ":
            name = name.split(stop)[0]
        out.add(name.strip().lower())
    return out


# -- the extras --------------------------------------------------------------------------------------------

def test_the_core_leaves_the_optional_packages_to_their_extras() -> None:
    extras = PROJECT["optional-dependencies"]
    assert not {"aiohttp", "cryptography", "pyjwt"} & _names(PROJECT["dependencies"])
    assert {"crc32c", "scramp", "lz4", "python-snappy", "zstandard"} <= _names(PROJECT["dependencies"])
    for module, (extra, distribution) in EXTRAS.items():
        assert distribution.lower() in _names(extras[extra]), (module, extra)
    assert extras["all"] == ["mockbroker[http,security,registry,telemetry]"]
    assert "mockbroker[all]" in extras["test"]  # the suite has every optional package


@pytest.mark.parametrize(("module", "line"), [
    ("aiohttp", "the HTTP endpoint needs aiohttp: pip install 'mockbroker[http]'"),
    ("cryptography", "TLS needs cryptography: pip install 'mockbroker[security]'"),
    ("jwt", "TLS needs PyJWT: pip install 'mockbroker[security]'"),
    ("opentelemetry.proto.metrics.v1.metrics_pb2", "TLS needs opentelemetry-proto: pip install 'mockbroker[telemetry]'"),
])
def test_require_names_the_extra_of_a_missing_module(monkeypatch: pytest.MonkeyPatch, module: str,
                                                     line: str) -> None:
    feature = "the HTTP endpoint" if module == "aiohttp" else "TLS"
    assert require(module, feature) is importlib.import_module(module)
    monkeypatch.setitem(sys.modules, module, None)  # what `import module` meets where it is not installed
    with pytest.raises(MissingExtraError) as caught:
        require(module, feature)
    assert str(caught.value) == line and isinstance(caught.value, ImportError)


def test_the_http_package_without_aiohttp_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    for name in [n for n in sys.modules if n.startswith("mockbroker.http") or n == "mockbroker.control_http"]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(MissingExtraError, match=r"^the HTTP endpoint needs aiohttp: pip install 'mockbroker\[http\]'$"):
        importlib.import_module("mockbroker.control_http")


def test_tls_and_signed_tokens_without_their_packages_say_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from mockbroker.security.oauth import OAuthConfig
    from mockbroker.security.tls import BrokerTls, TlsConfig

    monkeypatch.setitem(sys.modules, "cryptography", None)
    monkeypatch.setitem(sys.modules, "jwt", None)
    with pytest.raises(MissingExtraError, match=r"^TLS listeners \(SSL, SASL_SSL\) needs cryptography: "):
        BrokerTls(TlsConfig(), ["localhost"])
    with pytest.raises(MissingExtraError, match=r"needs PyJWT: pip install 'mockbroker\[security\]'$"):
        OAuthConfig(keys=["a-shared-secret"])
    assert OAuthConfig().keys is None  # unsecured tokens (Kafka's default validator) need nothing more


BLOCK_AND_RUN = "import sys; sys.modules[sys.argv[1]] = None; from mockbroker.cli import main; sys.exit(main(sys.argv[2:]))"


@pytest.mark.parametrize(("module", "flags", "extra"), [
    ("aiohttp", ["--port", "0", "--http-port", "0"], "http"),
    ("cryptography", ["--listener", "SSL://127.0.0.1:0"], "security"),
])
def test_the_cli_refuses_a_feature_without_its_extra_in_one_line(module: str, flags: list[str], extra: str) -> None:
    proc = subprocess.run([sys.executable, "-c", BLOCK_AND_RUN, module, "--no-env", *flags],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith(f"pip install 'mockbroker[{extra}]'\n") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


# -- metadata ----------------------------------------------------------------------------------------------

def test_the_metadata_an_index_shows() -> None:
    assert PROJECT["version"] == mockbroker.__version__
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE", "NOTICE"]
    assert "Apache License" in (REPO / "LICENSE").read_text() and "Version 2.0" in (REPO / "LICENSE").read_text()
    assert "Apache Kafka" in (REPO / "NOTICE").read_text()
    assert any(req.startswith("setuptools>=77") for req in PYPROJECT["build-system"]["requires"])  # PEP 639
    assert "Typing :: Typed" in PROJECT["classifiers"] and (REPO / "mockbroker" / "py.typed").exists()
    assert set(PROJECT["urls"]) >= {"Homepage", "Source", "Changelog"}
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog and f"## [{PROJECT['version']}]" in changelog


def test_the_readme_first_test_passes_against_the_working_tree() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "examples/first_test/test_first.py"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


# -- the release check, end to end (slow) --------------------------------------------------------------------

@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """scripts/release into a temp dir, the pure wheel smoke-tested (fresh venv, first test, no clone)."""
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([str(REPO / "scripts" / "release"), "--dist", str(dist), "--smoke", "pure"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert "1 passed" in proc.stdout and "walker python, a record produced and consumed" in proc.stdout
    assert "twine upload" in proc.stdout and "PASSED" in proc.stdout
    version = PROJECT["version"]
    [binary] = dist.glob(f"mockbroker-{version}-cp311-abi3-*manylinux_2_17_*.whl")
    return {"sdist": dist / f"mockbroker-{version}.tar.gz", "pure": dist / f"mockbroker-{version}-py3-none-any.whl",
            "binary": binary}


@pytest.mark.slow
def test_the_sdist_holds_what_the_builds_need(released: dict[str, Path]) -> None:
    with tarfile.open(released["sdist"]) as tar:
        names = {n.partition("/")[2] for n in tar.getnames()}
    assert {"LICENSE", "NOTICE", "pyproject.toml", "setup.py", "README.md", "mockbroker/py.typed",
            "mockbroker/protocol/records/_walk.c", "mockbroker/protocol/records/_walk.pyi"} <= names
    assert not any(n.endswith(".so") for n in names)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pure", "binary"])
def test_the_wheels_hold_the_license_the_types_and_the_console(released: dict[str, Path], kind: str) -> None:
    with zipfile.ZipFile(released[kind]) as whl:
        names = set(whl.namelist())
        wheel_file = whl.read(f"mockbroker-{PROJECT['version']}.dist-info/WHEEL").decode()
        metadata = whl.read(f"mockbroker-{PROJECT['version']}.dist-info/METADATA").decode()
    dist_info = f"mockbroker-{PROJECT['version']}.dist-info"
    assert {f"{dist_info}/licenses/LICENSE", f"{dist_info}/licenses/NOTICE", "mockbroker/py.typed",
            "mockbroker/protocol/records/_walk.pyi", "mockbroker/http/static/index.html"} <= names
    assert "License-Expression: Apache-2.0" in metadata and "Provides-Extra: security" in metadata
    walker = {n for n in names if n.startswith("mockbroker/protocol/records/_walk.") and n.endswith(".so")}
    if kind == "pure":
        assert "Tag: py3-none-any" in wheel_file and "Root-Is-Purelib: true" in wheel_file and walker == set()
    else:
        assert f"Tag: cp311-abi3-manylinux_2_17_{platform.machine()}" in wheel_file
        assert walker == {"mockbroker/protocol/records/_walk.abi3.so"}
