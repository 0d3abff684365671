"""An answer that does not fit its schema (a key no version of the struct has: a bug of ours) is never sent
with the field left at its default: the connection layer logs the EncodeError, which names the field, and
closes that connection; the broker keeps serving every other one."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from mockbroker import dispatch
from mockbroker.protocol.messages import Msg
from mockbroker.server import MockBroker
from tests.handlers.conftest import METADATA, PRODUCE, connect, make_batch, produce_body
from tests.rawclient import RawClient


def _misspelled_answer(ctx: object, header: object, req: Msg) -> Msg:
    return Msg(throttle_time_ms=0, responses=[Msg(name="t", partition_responses=[Msg(index=0, eror_code=3)])])


def _bytes_until_closed(client: RawClient, timeout: float = 10.0) -> bytes:
    client.sock.settimeout(timeout)
    received = b""
    try:
        while data := client.sock.recv(65536):
            received += data
    except (ConnectionResetError, BrokenPipeError):
        pass
    except TimeoutError:
        raise AssertionError(f"the connection stayed open ({len(received)} bytes received)") from None
    return received


def test_an_answer_with_an_unknown_field_closes_the_connection_and_is_logged(
        mockbroker: MockBroker, client: RawClient, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    mockbroker.create_topic("t")
    spec = dispatch.REGISTRY[PRODUCE]
    monkeypatch.setitem(dispatch.REGISTRY, PRODUCE, dataclasses.replace(spec, fn=_misspelled_answer))
    with caplog.at_level(logging.ERROR, logger="mockbroker.connection"):
        client.send(PRODUCE, 9, produce_body("t", make_batch(b"v")))
        assert _bytes_until_closed(client) == b""  # no frame at all, not one with error_code 0
    [record] = [r for r in caplog.records if r.name == "mockbroker.connection" and r.levelno == logging.ERROR]
    assert record.getMessage() == "cannot encode the response to API key 0 v9"
    assert record.exc_info is not None
    assert "unknown field 'eror_code' in ProduceResponse.responses[].partition_responses[] (ProduceResponse v9" \
        in str(record.exc_info[1])
    with connect(mockbroker) as other:  # the broker still serves the others
        assert other.request(METADATA, 12, {"topics": [{"name": "t"}]}).topics[0].name == "t"
