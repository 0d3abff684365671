"""Classic group members and the consumer protocol's bytes: a member's protocols and callbacks, the
subscription and assignment formats (ConsumerProtocolSubscription/Assignment), JoinGroup/SyncGroup
error answers."""

from __future__ import annotations

from dataclasses import dataclass, field

from mockbroker.errors import ErrorCode
from mockbroker.protocol.errors import DecodeError
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import Reader
from mockbroker.state.groups.common import Responder


def parse_subscription_topics(metadata: bytes) -> list[str]:
    """The topics of a consumer-protocol subscription (ConsumerProtocolSubscription, read as its v0
    prefix as Kafka does). DecodeError when the bytes are not one."""
    r = Reader(memoryview(metadata))
    r.int16()  # version
    n = r.int32()
    if n < 0:
        return []
    return [r.string() for _ in range(n)]


def join_error(code: ErrorCode, member_id: str = "") -> Msg:
    return Msg(error_code=code, generation_id=-1, protocol_type=None, protocol_name="", leader="",
               skip_assignment=False, member_id=member_id, members=[])


def sync_error(code: ErrorCode) -> Msg:
    return Msg(error_code=code, protocol_type=None, protocol_name=None, assignment=b"")


@dataclass
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    is_new: bool = False
    join_responder: Responder | None = field(default=None, repr=False)
    sync_responder: Responder | None = field(default=None, repr=False)

    @property
    def awaiting_join(self) -> bool:
        return self.join_responder is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_responder is not None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str | None:
        """The member's most preferred protocol among the candidates (its list is in preference order)."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        return None

    def metadata(self, protocol_name: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol_name:
                return meta
        return b""

    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return False
        return self.awaiting_join or self.awaiting_sync



def inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


def decode_assignment(raw: bytes) -> dict[str, list[int]] | None:
    """A consumer-protocol assignment (ConsumerProtocolAssignment) as {topic: partitions}; None if the
    bytes are not one (another protocol type)."""
    if not raw:
        return {}
    try:
        r = Reader(memoryview(raw))
        r.int16()
        out: dict[str, list[int]] = {}
        for _ in range(max(r.int32(), 0)):
            topic = r.string()
            out[topic] = sorted(r.int32() for _ in range(max(r.int32(), 0)))
        return out
    except DecodeError:
        return None
