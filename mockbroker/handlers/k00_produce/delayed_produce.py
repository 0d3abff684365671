"""An acks=all Produce waiting for the ISR (no API key of its own: Produce's, handler.py), as Kafka's
DelayedProduce: once appended, each partition waits until its high watermark reaches the end of what was
appended, which a stalled in-sync follower holds back (state/cluster/replicas.py) until it catches up (resumed)
or leaves the ISR (replica.lag.time.max.ms on the broker clock). Then the partition is answered as
Partition.checkEnoughReplicasReachOffset says: NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR
shrank below min.insync.replicas meanwhile (the records stay in the log, and keep their offsets in the
answer), or NOT_LEADER_OR_FOLLOWER if the node lost leadership. At the request's timeout_ms (real time,
Kafka's purgatory) the partitions still waiting get REQUEST_TIMED_OUT.
"""

from __future__ import annotations

import asyncio

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.messages import Msg
from mockbroker.state.cluster.cluster import Partition
from mockbroker.state.cluster.replicas import check_enough_replicas

# (partition, offset the high watermark must reach, that partition's answer to fill in)
Waiting = list[tuple[Partition, int, Msg]]


def must_wait(node_id: int, waiting: Waiting) -> bool:
    """Whether any appended partition still needs its followers (else the answer goes out now)."""
    for p, required, _ in waiting:  # a loop, not any() over a generator: every acks=all answer comes here
        if not check_enough_replicas(p, node_id, required)[0]:
            return True
    return False


async def wait_for_replicas(node_id: int, waiting: Waiting, timeout_ms: int, response: Msg) -> Msg:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not done.done() and not must_wait(node_id, waiting):
            done.set_result(None)

    logs = {id(p.log): p.log for p, _, _ in waiting}
    for log in logs.values():
        log.add_append_listener(wake)
    try:
        await asyncio.wait([done], timeout=max(timeout_ms, 0) / 1000.0)
    finally:
        for log in logs.values():
            log.remove_append_listener(wake)
    for p, required, answer in waiting:
        finished, code = check_enough_replicas(p, node_id, required)
        answer.error_code = code if finished else ErrorCode.REQUEST_TIMED_OUT
    return response
