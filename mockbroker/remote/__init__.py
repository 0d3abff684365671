"""The remote target: MockBroker's test API answered by any Kafka-compatible cluster over Kafka's protocol.

    from mockbroker.remote import RemoteBroker
    with RemoteBroker("kafka1:9092,kafka2:9092") as cluster:
        cluster.create_topic("orders", 3)
        ...  # the code under test produces
        assert [r.value for r in cluster.records("orders")] == [...]

`client.py` (a blocking client on mockbroker/protocol), `security.py` (TLS and SASL settings in librdkafka's
and Java's names), `broker.py` (RemoteBroker: topics, records, batches, offsets, producers), `coordinators.py`
(groups, committed offsets, transactions), `naming.py` (a test's prefix on a shared cluster), `teardown.py`
(deleting an isolated test's topics and groups), `waits.py` (wait_for_* by polling), `refused.py`
(NotOnRemoteTarget and the calls only the embedded broker can answer), `pytest_support.py` (the options),
`proxy.py` (KafkaProxy: the fault proxy in front of each broker, for inject/received; `proxy_connection.py`
pairs each client connection with one to the broker, `proxy_rewrite.py` rewrites the brokers' endpoints in
answers, `proxy_security.py` its TLS on both sides, `proxy_intercept.py` request hooks through it).
docs/remote-target.md has the table of calls.
"""

from mockbroker.remote.broker import RemoteBroker, RemoteTopic
from mockbroker.remote.client import UnsupportedOnTarget
from mockbroker.remote.proxy import KafkaProxy
from mockbroker.remote.refused import EMBEDDED_ONLY, NotOnRemoteTarget

__all__ = ["EMBEDDED_ONLY", "KafkaProxy", "NotOnRemoteTarget", "RemoteBroker", "RemoteTopic", "UnsupportedOnTarget"]
