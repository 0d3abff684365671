"""An isolated test's teardown on a shared cluster: its topics deleted (DeleteTopics to the controller) and
its groups deleted (DeleteGroups to each group's coordinator), best effort: what could not be deleted comes
back as one line each, for the fixture to report. Transactional ids have no delete request in Kafka; the
cluster forgets them after transactional.id.expiration.ms (Kafka's default: 7 days)."""

from __future__ import annotations

from mockbroker.errors import ErrorCode
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.remote.client import ClusterClient
from mockbroker.remote.coordinators import listed_groups
from mockbroker.remote.naming import Isolation


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def delete_topics(client: ClusterClient, names: Isolation, timeout: float) -> list[str]:
    """Delete every topic under the prefix; a line per topic the cluster would not delete."""
    own = sorted(t.name for t in client.metadata(None).topics if names.own(t.name))
    if not own:
        return []
    conn = client.node(client.controller_id) if client.controller_id >= 0 else client.any()
    answer = conn.request(ApiKey.DELETE_TOPICS, {"topics": [{"name": n} for n in own], "topic_names": own,
                                                 "timeout_ms": int(timeout * 1000)}, newest=6, oldest=1)
    return [f"topic {r.name!r} not deleted: {_error_name(r.error_code)}"
            + (f" ({r.error_message})" if r.get("error_message") else "")
            for r in answer.responses if r.error_code != ErrorCode.NONE]


def delete_groups(client: ClusterClient, names: Isolation) -> list[str]:
    """Delete every group under the prefix at the node that lists it (its coordinator); a line per group the
    cluster would not delete (NON_EMPTY_GROUP: a member of the test's is still in it)."""
    out = []
    for node_id, listed in listed_groups(client).items():
        own = sorted(g for g, _ in listed if names.own(g))
        if not own:
            continue
        answer = client.node(node_id).request(ApiKey.DELETE_GROUPS, {"groups_names": own}, newest=2)
        out += [f"group {r.group_id!r} not deleted: {_error_name(r.error_code)}"
                for r in answer.results if r.error_code not in (ErrorCode.NONE, ErrorCode.GROUP_ID_NOT_FOUND)]
    return out


def delete_own(client: ClusterClient, names: Isolation, timeout: float) -> list[str]:
    """Delete the test's groups, then its topics; every failure as a line (a request that failed outright too)."""
    problems = []
    for what, step in (("groups", lambda: delete_groups(client, names)),
                       ("topics", lambda: delete_topics(client, names, timeout))):
        try:
            problems += step()
        except Exception as exc:  # best effort: one failed step must not stop the other
            problems.append(f"deleting the {what} under {names.prefix!r} failed: {type(exc).__name__}: {exc}")
    return problems
