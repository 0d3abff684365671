"""mockbroker.healthcheck in-process: the hand-written ApiVersions v0 frame, a running broker answers it,
a closed port does not (the subprocess runs are in test_entrypoint.py)."""

from __future__ import annotations

import pytest

from mockbroker import MockBroker
from mockbroker.healthcheck import api_versions_frame, check, main, parse_address
from mockbroker.protocol.headers import decode_request_header
from mockbroker.protocol.messages import decode_request
from tests.docker.support import free_port


def test_the_frame_is_a_valid_api_versions_v0_request() -> None:
    frame = api_versions_frame(7)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    header, reader = decode_request_header(frame[4:])
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (
        18, 0, 7, "mockbroker-healthcheck")
    decode_request(18, 0, reader)


def test_a_running_broker_passes_and_a_closed_port_fails(capsys: pytest.CaptureFixture[str]) -> None:
    with MockBroker(port=0).run_in_thread() as broker:
        assert check(broker.host, broker.port, timeout=5) is None
        assert main(["--bootstrap", broker.bootstrap_servers]) == 0
        assert capsys.readouterr().out.strip() == f"ok {broker.bootstrap_servers}"
    reason = check("127.0.0.1", free_port(), timeout=2)
    assert reason is not None and "Refused" in reason
    assert main(["--bootstrap", f"127.0.0.1:{free_port()}", "--timeout", "1"]) == 1
    assert "ConnectionRefusedError" in capsys.readouterr().err


def test_addresses() -> None:
    assert parse_address("localhost:9092") == ("localhost", 9092)
    assert parse_address("[::1]:9092") == ("::1", 9092)
    assert parse_address(":9092") == ("127.0.0.1", 9092)
    with pytest.raises(ValueError):
        parse_address("localhost")
