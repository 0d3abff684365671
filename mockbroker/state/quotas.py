"""Client quota configs as Kafka keeps them (ClientQuotaRecord in its metadata log): entities, keys, values.

An entity is a set of (type, name) components: `user`, `client-id` (together or alone) or `ip` (alone); a
name of None is the type's default entity (`<default>` in Kafka's docs). Keys, as Kafka's QuotaConfig
names and types them:
- user / client-id entities: producer_byte_rate, consumer_byte_rate (whole numbers), request_percentage,
  controller_mutation_rate (doubles);
- ip entities: connection_creation_rate (a whole number).

`ClientQuotas` holds them, alters them with the checks of Kafka's ClientQuotaControlManager (the same
codes and messages), describes them with its filter (EXACT / DEFAULT / ANY components, strict), and
resolves the quota that applies to a (user, client-id) pair in the order Kafka documents:

    /config/users/<user>/clients/<client-id>
    /config/users/<user>/clients/<default>
    /config/users/<user>
    /config/users/<default>/clients/<client-id>
    /config/users/<default>/clients/<default>
    /config/users/<default>
    /config/clients/<client-id>
    /config/clients/<default>

each key on its own (a user's producer_byte_rate and a client's consumer_byte_rate can both apply).
Pure: no I/O; `on_change` (the data dir's hook) is called after each change.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from mockbroker.errors import KafkaError
from mockbroker.protocol.errors import ErrorCode

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
ENTITY_TYPES = (USER, CLIENT_ID, IP)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

# key -> (type as Kafka's ConfigDef has it, the largest value it holds)
CLIENT_KEYS: dict[str, tuple[str, float]] = {
    PRODUCER_BYTE_RATE: ("LONG", float(2**63 - 1)),
    CONSUMER_BYTE_RATE: ("LONG", float(2**63 - 1)),
    REQUEST_PERCENTAGE: ("DOUBLE", float("inf")),
    CONTROLLER_MUTATION_RATE: ("DOUBLE", float("inf")),
}
IP_KEYS: dict[str, tuple[str, float]] = {CONNECTION_CREATION_RATE: ("INT", float(2**31 - 1))}

# DescribeClientQuotas match types
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2

Entity = tuple[tuple[str, str | None], ...]  # components sorted by type


def entity_of(components: Mapping[str, str | None]) -> Entity:
    return tuple(sorted(components.items()))


def entity_text(entity: Entity) -> str:
    """As Kafka's ClientQuotaEntity prints itself in messages."""
    return "ClientQuotaEntity(entries={" + ", ".join(f"{t}={n}" for t, n in entity) + "})"


@dataclass(frozen=True)
class Applied:
    """The quota that applies to a client for one key, and the entity it comes from (the metric tags)."""
    value: float
    user: str  # the sensor's user tag: the client's user when the entity has a user component, else ""
    client_id: str  # likewise for client-id


@dataclass
class AlterResult:
    entity: Entity
    error: ErrorCode
    message: str | None


class ClientQuotas:
    """Every entity's quota values (cluster-wide, as Kafka's metadata image)."""

    def __init__(self) -> None:
        self.entities: dict[Entity, dict[str, float]] = {}
        self.on_change: Callable[[], None] | None = None

    # -- changes ---------------------------------------------------------------------------------
    def set(self, entity: Entity, key: str, value: float | None) -> None:
        """Set (value) or remove (None) one key, unchecked: for loading and for checked callers."""
        values = self.entities.setdefault(entity, {})
        if value is None:
            values.pop(key, None)
        else:
            values[key] = float(value)
        if not values:
            del self.entities[entity]

    def alter(self, entries: Iterable[tuple[list[tuple[str, str | None]], list[tuple[str, float | None]]]],
              validate_only: bool = False) -> list[AlterResult]:
        """AlterClientQuotas: per entry (its components in request order, its ops as (key, value or None
        to remove)), Kafka's checks; the changes of the entries that pass are made unless validate_only."""
        results: dict[Entity, AlterResult] = {}
        changes: list[tuple[Entity, str, float | None]] = []
        for components, ops in entries:
            entity = entity_of(dict(components))  # as Kafka's request: a later component of a type wins
            alterations: dict[str, float | None] = {}
            duplicate_key = False
            for key, value in ops:
                if key in alterations:
                    duplicate_key = True
                else:
                    alterations[key] = value
            if duplicate_key or entity in results:  # Kafka's message for both (its duplicate-key error is overwritten)
                results[entity] = AlterResult(entity, ErrorCode.INVALID_REQUEST,
                                              f"Ignoring duplicate entity {entity_text(entity)}")
                continue
            error = self._check_entry(entity, alterations)
            if error is not None:
                results[entity] = AlterResult(entity, error.code, error.message)
                continue
            changes.extend((entity, key, value) for key, value in alterations.items())
            results[entity] = AlterResult(entity, ErrorCode.NONE, None)
        if not validate_only:
            changed = False
            for entity, key, value in changes:
                if results[entity].error != ErrorCode.NONE:
                    continue
                if self.entities.get(entity, {}).get(key) != value:
                    self.set(entity, key, value)
                    changed = True
            if changed and self.on_change is not None:
                self.on_change()
        return list(results.values())

    def _check_entry(self, entity: Entity, alterations: dict[str, float | None]) -> KafkaError | None:
        if not entity:
            return KafkaError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
        types = dict(entity)
        for entity_type, name in entity:
            if entity_type not in ENTITY_TYPES:
                return KafkaError(ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {entity_type}")
            if name is not None and name == "":
                return KafkaError(ErrorCode.INVALID_REQUEST, f"Empty {entity_type} not supported")
        if IP in types:
            if USER in types or CLIENT_ID in types:
                return KafkaError(ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                                                             "not be combined with User or ClientId")
            if not valid_ip_entity(types[IP]):
                return KafkaError(ErrorCode.INVALID_REQUEST, f"{types[IP]} is not a valid IP or resolvable host.")
            keys = IP_KEYS
        else:
            keys = CLIENT_KEYS
        for key, value in alterations.items():
            if value is None:
                continue  # removing a key that is not set (or not valid) is no change
            error = check_value(keys, key, value)
            if error is not None:
                return error
        return None

    # -- reading ---------------------------------------------------------------------------------
    def describe(self, components: Iterable[tuple[str, int, str | None]], strict: bool) -> dict[Entity, dict[str, float]]:
        """DescribeClientQuotas: the entities the filter matches (components as (type, match type, match)).
        Raises KafkaError as Kafka answers a bad filter."""
        exact: dict[str, str | None] = {}
        any_of: set[str] = set()
        for entity_type, match_type, match in components:
            if entity_type == "":
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid empty entity type.")
            if entity_type in exact or entity_type in any_of:
                raise KafkaError(ErrorCode.INVALID_REQUEST,
                                 f"Entity type {entity_type} cannot appear more than once in the filter.")
            if entity_type not in ENTITY_TYPES:
                raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {entity_type}")
            if match_type == MATCH_EXACT:
                if match is None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_EXACT, but set match string to null.")
                exact[entity_type] = match
            elif match_type == MATCH_DEFAULT:
                if match is not None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
                exact[entity_type] = None
            elif match_type == MATCH_ANY:
                if match is not None:
                    raise KafkaError(ErrorCode.INVALID_REQUEST,
                                     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
                any_of.add(entity_type)
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown match type {match_type}")
        named = set(exact) | any_of
        if IP in named and (USER in named or CLIENT_ID in named):
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
                                                        "component should not be used with user or clientId filter component.")
        out = {}
        for entity, values in self.entities.items():
            types = dict(entity)
            if strict and len(types) != len(named):
                continue
            if all(t in types and types[t] == name for t, name in exact.items()) and all(t in types for t in any_of):
                out[entity] = dict(values)
        return out

    def applied(self, key: str, user: str, client_id: str) -> Applied | None:
        """The quota `key` a client (its user, its client id) is held to, by Kafka's order; None: none."""
        order: list[tuple[Entity, str, str]] = [
            (((CLIENT_ID, client_id), (USER, user)), user, client_id),
            (((CLIENT_ID, None), (USER, user)), user, client_id),
            (((USER, user),), user, ""),
            (((CLIENT_ID, client_id), (USER, None)), user, client_id),
            (((CLIENT_ID, None), (USER, None)), user, client_id),
            (((USER, None),), user, ""),
            (((CLIENT_ID, client_id),), "", client_id),
            (((CLIENT_ID, None),), "", client_id),
        ]
        for entity, user_tag, client_tag in order:
            value = self.entities.get(entity, {}).get(key)
            if value is not None:
                return Applied(value, user_tag, client_tag)
        return None

    def ip_rate(self, ip: str) -> float | None:
        """connection_creation_rate for connections from ip: its own, else the default ip entity's."""
        for name in (ip, None):
            value = self.entities.get(((IP, name),), {}).get(CONNECTION_CREATION_RATE)
            if value is not None:
                return value
        return None


def valid_ip_entity(name: str | None) -> bool:
    """An IP address (a host name Kafka would resolve is refused here: no I/O in state)."""
    if name is None:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return name == "localhost"
    return True


def check_value(keys: Mapping[str, tuple[str, float]], key: str, value: float) -> KafkaError | None:
    """Kafka's validateQuotaKeyValue: a known key, a positive value, whole numbers where the type is."""
    if key not in keys:
        return KafkaError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if value <= 0.0:
        return KafkaError(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    kind, largest = keys[key]
    if kind == "DOUBLE":
        return None
    if value > largest:
        article = "an" if kind == "INT" else "a"
        return KafkaError(ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for {article} {kind}.")
    if abs(value % 1.0) > 1e-6:
        return KafkaError(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")
    return None
