"""What a restart on a data dir keeps of share groups (issue #31): the share coordinator's state, written to
`__share_group_state` as Kafka's ShareSnapshot / ShareUpdate records, comes back: each share partition's
start offset and its acknowledged, archived and released records with their delivery counts. Records
acquired when the broker stopped come back available (their locks belonged to the broker that stopped), as
in Kafka. Group configs come back too (Kafka keeps them as ConfigRecords of its metadata log; mockbroker in
the data dir's mockbroker-metadata.json, with the dynamic broker configs)."""

from __future__ import annotations

from pathlib import Path

from mockbroker.protocol.share_state_records import SHARE_SNAPSHOT, SHARE_UPDATE, decode_key, decode_value
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_admin_configs import by_name, describe, incremental
from tests.handlers.test_share_groups import acquired, heartbeat, share_fetch
from tests.rawclient import RawClient

GROUP, SET, GROUP_CONFIG, DEFAULT_CONFIG = 32, 0, 8, 5
ACCEPT, RELEASE, REJECT = 1, 2, 3


def state_records(broker: MockBroker) -> list[tuple[int, object]]:
    """(record type, value) of every record of __share_group_state, in log order per partition."""
    topic = broker.node.cluster.topic(SHARE_STATE_TOPIC)
    out = []
    for partition in topic.partitions:
        for _, record in partition.log.records():
            key = decode_key(record.key)
            out.append((key.record_type, None if record.value is None else decode_value(key.record_type, record.value)))
    return out


def test_a_restart_on_a_data_dir_keeps_the_share_partition_state(tmp_path: Path) -> None:
    with MockBroker(data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("q", 1)
        client = RawClient(b1.host, b1.port)
        produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(8)]))
        assert incremental(client, GROUP, "sg", [("share.auto.offset.reset", SET, "earliest")]).error_code == 0
        heartbeat(client, "a", 0, ["q"])
        topic_id = b1.node.cluster.topic("q").topic_id
        assert acquired(share_fetch(client, topic_id, "a", 0, max_records=6)) == [(0, 0, 5, 1)]
        # 0-1 accepted, 2 released, 3 rejected, 4-5 still acquired at the stop.
        acks = {0: [(0, 1, [ACCEPT]), (2, 2, [RELEASE]), (3, 3, [REJECT])]}
        assert share_fetch(client, topic_id, "a", 1, acks=acks, max_records=0).error_code == 0
        before = b1.share_groups()["sg"]["partitions"]["q-0"]
        assert before["start_offset"] == 2
        records = state_records(b1)
        assert [t for t, _ in records] == [SHARE_SNAPSHOT, SHARE_UPDATE]  # initialized, then the acknowledgements
        # The broker stops with the client still connected: a stopping broker's closes end no share session (Kafka's
        # shutdown closes its sockets without the disconnect listener), so 4-5 are still acquired at the stop. A
        # client.close() here would be a disconnect: the member's records released and that release written.
        first_client = client
    first_client.close()
    with MockBroker(data_dir=tmp_path).run_in_thread() as b2:
        client = RawClient(b2.host, b2.port)
        assert [r.value for r in b2.records("q")] == [f"v{i}".encode() for i in range(8)]  # the log is kept
        after = b2.share_groups()["sg"]["partitions"]["q-0"]
        assert after["start_offset"] == 2
        states = {r["offset"]: (r["state"], r["delivery_count"]) for r in after["records"]}
        # 4-5 were acquired at the stop, never written: the share partition ends where its persisted state does.
        assert states == {2: ("AVAILABLE", 1), 3: ("ARCHIVED", 1)}
        entry = by_name(describe(client, GROUP, "sg"))["share.auto.offset.reset"]
        assert (entry.value, entry.config_source) == ("earliest", GROUP_CONFIG)  # the group's config is kept
        # A member of the group after the restart gets the released record again (its second delivery), then
        # the ones that were acquired at the stop, never the archived or accepted ones.
        heartbeat(client, "b", 0, ["q"])
        topic_id = b2.node.cluster.topic("q").topic_id
        assert acquired(share_fetch(client, topic_id, "b", 0, max_records=10)) == [(0, 2, 2, 2), (0, 4, 7, 1)]
        client.close()
