"""README.md is the project's front page: it opens with what a newcomer needs, in order (install, a first
pytest test, an async test, compose), its first and async tests are the files in examples/ (which the
release smoke test runs), and it keeps the set-up commands and the gaps' headlines. Its blocks run with the
rest of the docs' (tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_docs import blocks_of

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"


def sections() -> list[str]:
    return re.findall(r"^## (.+)$", README.read_text(), re.M)


def test_the_readme_opens_with_install_first_test_async_test_and_compose() -> None:
    assert sections()[:4] == ["Install", "A first test", "An async test", "With docker-compose"]


def test_the_first_test_is_examples_first_test_byte_for_byte() -> None:
    [first] = [b for b in blocks_of(README) if b.lang == "python" and "def test_producer_writes_one_record" in b.text]
    assert first.kind == "pytest"
    assert first.text == (REPO / "examples" / "first_test" / "test_first.py").read_text()


def test_the_async_test_is_examples_async_test_and_says_pytest_asyncios_mode() -> None:
    [block] = [b for b in blocks_of(README) if b.lang == "python" and "async def test_" in b.text]
    assert block.kind == "pytest"
    assert block.text == (REPO / "examples" / "async_test" / "test_async_first.py").read_text()
    assert "@pytest.mark.asyncio" in block.text and 'asyncio_mode = "auto"' in README.read_text()


def test_the_install_lines_name_what_the_first_tests_import() -> None:
    text = README.read_text()
    assert "pip install mockbroker pytest confluent-kafka" in text
    assert "pip install mockbroker pytest pytest-asyncio aiokafka" in text
    installs = [b for b in blocks_of(README) if "pip install" in b.text]
    assert installs and all(b.kind == "not-run" for b in installs)  # nothing from the index before a release


def test_the_readme_keeps_the_set_up_commands_and_the_gaps_headlines() -> None:
    text = README.read_text()
    assert ".venv/bin/mockbroker --port 9092" in text and "scripts/test" in text
    assert "`.ci/run` calls exactly that." in text
    assert sections()[-1] == "Gaps (not done yet)" and "(docs/gaps.md)" in text
    assert len(text.splitlines()) < 300  # the front page; the rest is in docs/
