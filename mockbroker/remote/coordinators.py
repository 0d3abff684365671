"""What the remote target reads of a cluster's coordinators: committed offsets (FindCoordinator, OffsetFetch),
groups (ListGroups to every node, then DescribeGroups or ConsumerGroupDescribe to the node that listed the
group: its coordinator), transactions (ListTransactions to every node, DescribeTransactions likewise), in
the shapes MockBroker's groups(), committed() and transactions() give."""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.errors import ErrorCode
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.remote.client import COORDINATOR_GROUP, ClusterClient, UnsupportedOnTarget, check
from mockbroker.state.groups.classic_members import decode_assignment
from mockbroker.state.groups.common import GroupSummary, MemberSummary
from mockbroker.state.txn.metadata import TransactionInfo


def committed(client: ClusterClient, group: str) -> dict[tuple[str, int], int]:
    """{(topic, partition): offset} of every partition the group committed (OffsetFetch, all topics)."""
    conn = client.coordinator(group, COORDINATOR_GROUP)
    version = conn.version_for(ApiKey.OFFSET_FETCH, 8, 2)  # v8: the groups form (v9+ adds member epochs)
    answer = conn.send(ApiKey.OFFSET_FETCH, version, {
        "group_id": group, "topics": None, "groups": [{"group_id": group, "topics": None}], "require_stable": False})
    if version >= 8:
        answer = answer.groups[0]
    check(answer.error_code, f"OffsetFetch({group!r})")
    out = {}
    for topic in answer.topics:
        for p in topic.partitions:
            check(p.error_code, f"OffsetFetch({group!r}) {topic.name}-{p.partition_index}")
            if p.committed_offset >= 0:
                out[(topic.name, p.partition_index)] = int(p.committed_offset)
    return dict(sorted(out.items()))


def listed_groups(client: ClusterClient) -> dict[int, list[tuple[str, str]]]:
    """{node: [(group id, group type)]}: what each node coordinates (ListGroups)."""
    client.metadata([])
    out: dict[int, list[tuple[str, str]]] = {}
    for node_id in sorted(client.nodes):
        answer = client.node(node_id).request(ApiKey.LIST_GROUPS, {"states_filter": [], "types_filter": []},
                                              newest=5, oldest=0)
        check(answer.error_code, f"ListGroups on node {node_id}")
        out[node_id] = [(g.group_id, (g.group_type or "classic").lower()) for g in answer.groups]
    return out


def _everything(name: str) -> bool:
    return True


def groups(client: ClusterClient, keep: Callable[[str], bool] = _everything) -> list[GroupSummary]:
    """Every group of the cluster whose id `keep` accepts, as MockBroker.groups() summarises them (by id)."""
    out = []
    for node_id, listed in listed_groups(client).items():
        listed = [(g, kind) for g, kind in listed if keep(g)]
        conn = client.node(node_id)
        classic = [g for g, kind in listed if kind != "consumer"]
        consumer = [g for g, kind in listed if kind == "consumer"]
        if classic:
            answer = conn.request(ApiKey.DESCRIBE_GROUPS, {"groups": classic,
                                                           "include_authorized_operations": False}, newest=5)
            for g in answer.groups:
                if g.error_code != ErrorCode.NONE:  # gone since ListGroups
                    continue
                out.append(GroupSummary(
                    group_id=g.group_id, group_type="classic", protocol_type=g.protocol_type, state=g.group_state,
                    generation_or_epoch=-1, protocol=g.protocol_data or None, leader=None,
                    members=[MemberSummary(m.member_id, m.group_instance_id, m.client_id,
                                           decode_assignment(bytes(m.member_assignment or b"")), None)
                             for m in g.members]))
        if consumer:
            out += _consumer_groups(client, node_id, consumer)
    return sorted(out, key=lambda g: g.group_id)


def _consumer_groups(client: ClusterClient, node_id: int, ids: list[str]) -> list[GroupSummary]:
    """KIP-848 groups through ConsumerGroupDescribe (assignments by topic name, as the answer gives them)."""
    try:
        answer = client.node(node_id).request(ApiKey.CONSUMER_GROUP_DESCRIBE, {
            "group_ids": ids, "include_authorized_operations": False}, newest=1)
    except UnsupportedOnTarget:
        return []
    out = []
    for g in answer.groups:
        if g.error_code != ErrorCode.NONE:
            continue
        members = []
        for m in g.members:
            assigned = {tp.topic_name: sorted(tp.partitions) for tp in m.assignment.topic_partitions if tp.partitions}
            members.append(MemberSummary(m.member_id, m.instance_id, m.client_id, assigned, m.member_epoch))
        out.append(GroupSummary(group_id=g.group_id, group_type="consumer", protocol_type="consumer",
                                state=g.group_state, generation_or_epoch=g.group_epoch, protocol=g.assignor_name,
                                leader=None, members=members))
    return out


def transactions(client: ClusterClient, keep: Callable[[str], bool] = _everything) -> list[TransactionInfo]:
    """Every transactional id the cluster lists (not the dead ones) that `keep` accepts, as
    MockBroker.transactions() gives them."""
    client.metadata([])
    out = []
    for node_id in sorted(client.nodes):
        conn = client.node(node_id)
        listed = conn.request(ApiKey.LIST_TRANSACTIONS, {"state_filters": [], "producer_id_filters": [],
                                                         "duration_filter": -1}, newest=1)
        check(listed.error_code, f"ListTransactions on node {node_id}")
        ids = [t.transactional_id for t in listed.transaction_states if keep(t.transactional_id)]
        if not ids:
            continue
        described = conn.request(ApiKey.DESCRIBE_TRANSACTIONS, {"transactional_ids": ids}, newest=0)
        for t in described.transaction_states:
            if t.error_code != ErrorCode.NONE:  # gone since ListTransactions
                continue
            out.append(TransactionInfo(
                transactional_id=t.transactional_id, state=t.transaction_state, producer_id=t.producer_id,
                producer_epoch=t.producer_epoch, timeout_ms=t.transaction_timeout_ms,
                start_ms=t.transaction_start_time_ms, last_update_ms=-1,
                partitions=sorted((tp.topic, p) for tp in t.topics for p in tp.partitions), pending_offsets={}))
    return sorted(out, key=lambda t: t.transactional_id)
