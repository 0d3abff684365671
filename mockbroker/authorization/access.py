"""What every API's authorization check uses: the principal's access, and helpers that split a request
into what may be served and what is refused, and add the refusals to the handler's answer.

`Access` asks the cluster's authorizer (mockbroker/security/authorizer.py) about one request's
principal and client host. A check is `check(access, header, request, call) -> result` (registered with
its handler, mockbroker/dispatch.py): it answers refused parts of the request itself, calls the handler
(`call(request)`) with the part it may serve, and edits the handler's response (`then`), so handlers stay
as they are.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from mockbroker.dispatch import Call, HandlerResult
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.protocol.primitives import ZERO_UUID
from mockbroker.security.acls import CLUSTER_NAME, AclOperation, ResourceType
from mockbroker.security.authorizer import Authorizer

__all__ = ["Access", "AclOperation", "Call", "ResourceType", "extend", "partition_errors", "split", "then",
           "topic_name", "with_list"]


class Access:
    """One request's principal and host, and what the authorizer lets them do."""

    def __init__(self, authorizer: Authorizer, principal: str, host: str, cluster: Any) -> None:
        self.authorizer = authorizer
        self.principal = principal
        self.host = host
        self.cluster = cluster  # state.cluster.Cluster: topic ids -> names, auto-creation settings

    def may(self, op: AclOperation, rtype: ResourceType, name: str | None) -> bool:
        return self.authorizer.authorize(self.principal, self.host, op, rtype, name or "")

    def on_cluster(self, op: AclOperation) -> bool:
        return self.may(op, ResourceType.CLUSTER, CLUSTER_NAME)

    def topics(self, op: AclOperation, names: Iterable[str | None]) -> set[str | None]:
        """The names among `names` the principal may perform `op` on."""
        return {name for name in set(names) if self.may(op, ResourceType.TOPIC, name)}

    def on_any(self, op: AclOperation, rtype: ResourceType) -> bool:
        return self.authorizer.authorize_by_resource_type(self.principal, self.host, op, rtype)

    def operations(self, rtype: ResourceType, name: str) -> int:
        return self.authorizer.authorized_operations(self.principal, self.host, rtype, name)


def then(result: HandlerResult, edit: Callable[[Msg], Any]) -> HandlerResult:
    """Apply `edit` to the handler's response (in place), now or once an awaited one arrives."""
    if inspect.isawaitable(result):
        pending = result

        async def later() -> Any:
            response = await pending  # type: ignore[union-attr]
            if isinstance(response, dict):
                edit(response)  # type: ignore[arg-type]
            return response

        return later()
    if isinstance(result, dict):
        edit(result)  # type: ignore[arg-type]
    return result


def with_list(req: Msg, field: str, items: list[Any]) -> Msg:
    """A copy of the request with one list field replaced (the request itself is left as it came)."""
    out = Msg(req)
    out[field] = items
    return out


def extend(field: str, items: list[Any]) -> Callable[[Msg], None]:
    """An edit that appends the refused entries to a list of the response."""

    def edit(response: Msg) -> None:
        if items:
            response[field] = list(response.get(field) or []) + items

    return edit


def topic_name(access: Access, name: str | None, topic_id: Any) -> str | None:
    """A request topic's name: its name, or the name of its id (None: an id no topic has)."""
    if topic_id is not None and topic_id != ZERO_UUID:
        topic = access.cluster.topics_by_id.get(topic_id)
        return topic.name if topic is not None else None
    return name


def split(access: Access, op: AclOperation, entries: list[Msg], name_of: Any) -> tuple[list[Msg], list[Msg]]:
    """(allowed, refused) request entries by `op` on their topic; an entry whose topic id is unknown is
    allowed through, for the handler to answer UNKNOWN_TOPIC_ID."""
    allowed: list[Msg] = []
    refused: list[Msg] = []
    for entry in entries:
        name = name_of(entry)
        (allowed if name is None or access.may(op, ResourceType.TOPIC, name) else refused).append(entry)
    return allowed, refused


def partition_errors(topics: list[Msg], code: ErrorCode) -> list[Msg]:
    """OffsetCommit / TxnOffsetCommit answers: `code` on every partition of these request topics."""
    return [Msg(name=t.name, **({"topic_id": t.topic_id} if "topic_id" in t else {}), partitions=[
        Msg(partition_index=p.partition_index, error_code=code) for p in t.partitions]) for t in topics]
