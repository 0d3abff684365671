"""The client quota model (state/quotas.py, state/quota_rates.py) without sockets: AlterClientQuotas'
checks, DescribeClientQuotas' filter, Kafka's precedence, and rate windows and throttle times on a fake
clock."""

from __future__ import annotations

from mockbroker.protocol.errors import ErrorCode
from mockbroker.state.quota_rates import QuotaSensors, Rate
from mockbroker.state.quotas import MATCH_ANY, MATCH_DEFAULT, MATCH_EXACT, ClientQuotas, entity_of

ALICE: list[tuple[str, str | None]] = [("user", "alice")]
ALICE_APP: list[tuple[str, str | None]] = [("user", "alice"), ("client-id", "app")]


def alter(q: ClientQuotas, components: list[tuple[str, str | None]], **ops: float | None) -> tuple[int, str | None]:
    r = q.alter([(components, list(ops.items()))])[0]
    return r.error, r.message


def test_alter_sets_and_removes_keys_and_validate_only_changes_nothing() -> None:
    q = ClientQuotas()
    changes: list[int] = []
    q.on_change = lambda: changes.append(1)
    assert q.alter([(ALICE, [("producer_byte_rate", 1024.0)])], validate_only=True)[0].error == ErrorCode.NONE
    assert q.entities == {} and changes == []
    assert alter(q, ALICE, producer_byte_rate=1024.0, request_percentage=12.5) == (0, None)
    assert q.entities == {entity_of(dict(ALICE)): {"producer_byte_rate": 1024.0, "request_percentage": 12.5}}
    assert alter(q, ALICE, producer_byte_rate=None, request_percentage=None) == (0, None)
    assert q.entities == {} and len(changes) == 2


def test_alter_refuses_what_kafka_refuses() -> None:
    q = ClientQuotas()
    bad = ErrorCode.INVALID_REQUEST
    assert alter(q, [], producer_byte_rate=1.0) == (bad, "Invalid empty client quota entity")
    assert alter(q, [("group", "g")], producer_byte_rate=1.0) == (bad, "Unhandled client quota entity type: group")
    assert alter(q, [("user", "")], producer_byte_rate=1.0) == (bad, "Empty user not supported")
    assert alter(q, [("user", "a"), ("ip", "1.2.3.4")], connection_creation_rate=1.0) == (
        bad, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId")
    assert alter(q, [("ip", "not an ip")], connection_creation_rate=1.0) == (
        bad, "not an ip is not a valid IP or resolvable host.")
    assert alter(q, ALICE, connection_creation_rate=1.0) == (bad, "Invalid configuration key connection_creation_rate")
    assert alter(q, [("ip", "1.2.3.4")], producer_byte_rate=1.0) == (bad, "Invalid configuration key producer_byte_rate")
    assert alter(q, ALICE, producer_byte_rate=0.0) == (bad, "Quota producer_byte_rate must be greater than 0")
    assert alter(q, ALICE, producer_byte_rate=1.5) == (bad, "producer_byte_rate cannot be a fractional value.")
    assert alter(q, [("ip", None)], connection_creation_rate=3e9) == (
        bad, "Proposed value for connection_creation_rate is too large for an INT.")
    r = q.alter([(ALICE, [("producer_byte_rate", 1.0), ("producer_byte_rate", 2.0)])])[0]
    assert (r.error, r.message) == (bad, "Ignoring duplicate entity ClientQuotaEntity(entries={user=alice})")
    assert alter(q, ALICE, bogus_key=None) == (0, None)  # removing is never an error
    assert q.entities == {}


def test_a_failed_entry_leaves_the_others_applied() -> None:
    q = ClientQuotas()
    results = q.alter([(ALICE, [("producer_byte_rate", 10.0)]), ([("client-id", "x")], [("nope", 1.0)])])
    assert [r.error for r in results] == [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]
    assert list(q.entities) == [entity_of(dict(ALICE))]


def test_describe_filter_exact_default_any_and_strict() -> None:
    q = ClientQuotas()
    groups: list[list[tuple[str, str | None]]] = [ALICE, ALICE_APP, [("user", None)], [("client-id", "app")], [("ip", "1.2.3.4")]]
    for components in groups:
        key = "connection_creation_rate" if components[0][0] == "ip" else "consumer_byte_rate"
        assert alter(q, components, **{key: 5.0})[0] == 0

    def names(components: list[tuple[str, int, str | None]], strict: bool = False) -> set[tuple[tuple[str, str | None], ...]]:
        return set(q.describe(components, strict))

    assert names([("user", MATCH_EXACT, "alice")]) == {entity_of(dict(ALICE)), entity_of(dict(ALICE_APP))}
    assert names([("user", MATCH_EXACT, "alice")], strict=True) == {entity_of(dict(ALICE))}
    assert names([("user", MATCH_DEFAULT, None)]) == {entity_of({"user": None})}
    assert names([("client-id", MATCH_ANY, None)]) == {entity_of(dict(ALICE_APP)), entity_of({"client-id": "app"})}
    assert names([("client-id", MATCH_ANY, None)], strict=True) == {entity_of({"client-id": "app"})}
    assert len(names([])) == 5 and names([], strict=True) == set()
    assert names([("ip", MATCH_ANY, None)]) == {entity_of({"ip": "1.2.3.4"})}


def test_describe_refuses_bad_filters_with_kafkas_messages() -> None:
    q = ClientQuotas()
    cases: list[tuple[list[tuple[str, int, str | None]], ErrorCode, str]] = [
        ([("", MATCH_ANY, None)], ErrorCode.INVALID_REQUEST, "Invalid empty entity type."),
        ([("user", MATCH_ANY, None), ("user", MATCH_EXACT, "a")], ErrorCode.INVALID_REQUEST,
         "Entity type user cannot appear more than once in the filter."),
        ([("group", MATCH_ANY, None)], ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type group"),
        ([("user", MATCH_EXACT, None)], ErrorCode.INVALID_REQUEST,
         "Request specified MATCH_TYPE_EXACT, but set match string to null."),
        ([("ip", MATCH_ANY, None), ("client-id", MATCH_ANY, None)], ErrorCode.INVALID_REQUEST,
         "Invalid entity filter component combination. IP filter component should not be used with user or "
         "clientId filter component."),
    ]
    for components, code, message in cases:
        try:
            q.describe(components, False)
        except Exception as exc:
            assert (getattr(exc, "code", None), getattr(exc, "message", None)) == (code, message)
        else:
            raise AssertionError(f"{components} was accepted")


def test_precedence_is_kafkas_order_per_key() -> None:
    q = ClientQuotas()
    levels: list[tuple[list[tuple[str, str | None]], float]] = [([("client-id", None)], 8.0), ([("client-id", "app")], 7.0), ([("user", None)], 6.0),
              ([("user", None), ("client-id", None)], 5.0), ([("user", None), ("client-id", "app")], 4.0),
              ([("user", "alice")], 3.0), ([("user", "alice"), ("client-id", None)], 2.0),
              ([("user", "alice"), ("client-id", "app")], 1.0)]
    for components, value in levels:  # least specific first; each new one wins
        alter(q, components, producer_byte_rate=value)
        assert q.applied("producer_byte_rate", "alice", "app").value == value  # type: ignore[union-attr]
    applied = q.applied("producer_byte_rate", "bob", "other")
    assert applied is not None and (applied.value, applied.user, applied.client_id) == (5.0, "bob", "other")
    alter(q, [("user", None), ("client-id", None)], producer_byte_rate=None)
    applied = q.applied("producer_byte_rate", "bob", "other")
    assert applied is not None and (applied.value, applied.user, applied.client_id) == (6.0, "bob", "")
    assert q.applied("consumer_byte_rate", "alice", "app") is None  # each key on its own


def test_rate_spreads_a_first_burst_over_ten_windows_and_forgets_after_eleven() -> None:
    rate = Rate()
    rate.record(1000.0, 0)
    assert rate.window_size_ms(0) == 10_000 and rate.measure(0) == 100.0
    assert rate.throttle_ms(50.0, 0) == 10_000  # (100 - 50) / 50 * 10 s
    assert rate.throttle_ms(100.0, 0) == 0
    rate.record(1000.0, 20_000)  # the first sample expired
    assert rate.measure(20_000) == 100.0


def test_sensors_throttle_produce_and_share_a_rate_per_matched_entity() -> None:
    q = ClientQuotas()
    sensors = QuotaSensors(q)
    assert sensors.produce("alice", "app", 10_000, 0) == 0  # no quota: not even recorded
    alter(q, [("client-id", None)], producer_byte_rate=100.0)
    assert sensors.produce("alice", "app", 500, 0) == 0  # 50 B/s
    assert sensors.produce("bob", "app", 1000, 0) == 5_000  # same client id, same rate: 150 B/s -> 5 s
    assert sensors.produce("alice", "other", 500, 0) == 0  # another client id: its own rate
    # time heals: eleven windows later the samples are gone
    assert sensors.produce("alice", "app", 10, 12_000) == 0


def test_request_percentage_is_bounded_to_one_window_and_connections_are_refused_over_their_rate() -> None:
    q = ClientQuotas()
    sensors = QuotaSensors(q)
    alter(q, [("user", None)], request_percentage=1.0)
    assert sensors.request_time("alice", "app", 5.0, 0) == 1000  # 500 %-s over 10 s = 50 % >> 1 %: capped
    alter(q, [("ip", None)], connection_creation_rate=1.0)
    accepted = [sensors.connection("10.0.0.1", 0) == 0 for _ in range(15)]
    assert accepted == [True] * 10 + [False] * 5  # 10 over the 10 s window is the rate; the 11th is over
    assert sensors.connection("10.0.0.2", 0) == 0  # per ip
