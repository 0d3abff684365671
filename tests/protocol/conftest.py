"""Protocol-only test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared" / "kafka-protocol"


@pytest.fixture
def shared() -> Path:
    """The Kafka protocol reference data (../shared/kafka-protocol); skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found")
    return SHARED
