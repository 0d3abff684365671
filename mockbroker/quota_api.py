"""The client-quota part of MockBroker's API (`broker.quota_admin`; MockBroker's `set_quota` / `quotas` call
it): set, remove and list client quotas from a test, on the broker's loop, with AlterClientQuotas' checks.

    broker.set_quota(user="alice", producer_byte_rate=1024)            # /config/users/alice
    broker.set_quota(user="alice", client_id="app", request_percentage=50)
    broker.set_quota(client_id=DEFAULT, consumer_byte_rate=4096)       # /config/clients/<default>
    broker.set_quota(ip="127.0.0.1", connection_creation_rate=5)
    broker.set_quota(user="alice", producer_byte_rate=None)            # None removes a key
    broker.quotas()   # [{"entity": {"user": "alice", "client-id": "app"}, "values": {...}}, ...]

An entity is user and/or client_id, or ip alone; DEFAULT ("<default>") names a type's default entity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockbroker.state.quotas import CLIENT_ID, IP, USER, ClientQuotas

if TYPE_CHECKING:
    from mockbroker.loop_hop import LoopHop

DEFAULT = "<default>"  # the default entity of a type (a null name in Kafka's requests)


class QuotaAdmin:
    """broker.set_quota / quotas, on the cluster's quota configs (state/quotas.py)."""

    def __init__(self, quotas: ClientQuotas, hop: LoopHop) -> None:
        self._quotas = quotas
        self._hop = hop  # runs each call on the broker's loop

    def set_quota(self, *, user: str | None = None, client_id: str | None = None, ip: str | None = None,
                  **values: float | None) -> None:
        """Set quota keys (producer_byte_rate, consumer_byte_rate, request_percentage,
        controller_mutation_rate; connection_creation_rate for an ip) on one entity; a value None removes
        that key. Raises ValueError with Kafka's message for what AlterClientQuotas refuses."""
        components = [(t, None if name == DEFAULT else name)
                      for t, name in ((USER, user), (CLIENT_ID, client_id), (IP, ip)) if name is not None]
        if not values:
            raise ValueError("name at least one quota, e.g. producer_byte_rate=1024")

        def alter() -> None:
            result = self._quotas.alter([(components, list(values.items()))])[0]
            if result.error:
                raise ValueError(result.message)

        self._hop.call(alter)

    def quotas(self) -> list[dict[str, Any]]:
        """Every entity with quotas: {"entity": {type: name or DEFAULT}, "values": {key: value}}."""
        def read() -> list[dict[str, Any]]:
            return [{"entity": {t: DEFAULT if n is None else n for t, n in entity}, "values": dict(values)}
                    for entity, values in self._quotas.entities.items()]

        return self._hop.call(read)
