"""Quota enforcement as Kafka measures it: sampled rates, the quota check and the throttle time.

Kafka's ClientQuotaManager keeps a sensor per quota type and metric tags (user, client-id) with a Rate over
`quota.window.num` samples (11) of `quota.window.size.seconds` (1 s), and:
- a sample starts at the time of the first value recorded after the previous one completed (not aligned);
  samples older than samples x window are reset before a measure;
- the rate is the samples' sum over the elapsed time since the oldest sample started, and that time is at
  least (samples - 1) full windows (so a first burst is spread over 10 s, not 1);
- after each record the rate is checked against the quota; over it, the throttle time is
  (rate - quota) / quota x that same window, in ms, rounded. Bandwidth quotas (produce, fetch) are not
  bounded; request_percentage and connection_creation_rate throttles are capped at one window (1 s).
Times are the broker clock's (ms), so a fake clock drives every window.

`QuotaSensors` is one broker's set (Kafka's quotas are per broker): produce and fetch byte rates,
request time, controller mutations, and connections per IP.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockbroker.state.quotas import (
    CONSUMER_BYTE_RATE,
    CONTROLLER_MUTATION_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    ClientQuotas,
)

SAMPLES = 11  # quota.window.num
WINDOW_MS = 1000  # quota.window.size.seconds


@dataclass
class _Sample:
    start_ms: int
    value: float = 0.0


@dataclass
class Rate:
    """A rate per second over sampled windows, as Kafka's Rate over a SampledStat."""
    samples: int = SAMPLES
    window_ms: int = WINDOW_MS
    _samples: list[_Sample] = field(default_factory=list)
    _current: int = 0

    def record(self, value: float, now_ms: int) -> None:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        sample = self._samples[self._current]
        if now_ms >= sample.start_ms + self.window_ms:  # complete: advance to the next slot
            self._current = (self._current + 1) % self.samples
            if self._current >= len(self._samples):
                self._samples.append(_Sample(now_ms))
            else:
                self._samples[self._current] = _Sample(now_ms)
            sample = self._samples[self._current]
        sample.value += value

    def _purge(self, now_ms: int) -> None:
        expire = self.samples * self.window_ms
        for i, sample in enumerate(self._samples):
            if now_ms - sample.start_ms >= expire:
                self._samples[i] = _Sample(now_ms)

    def window_size_ms(self, now_ms: int) -> int:
        """The time the rate divides by: since the oldest sample started, at least samples - 1 windows."""
        self._purge(now_ms)
        oldest = min((s.start_ms for s in self._samples), default=now_ms)
        elapsed = now_ms - oldest
        full = elapsed // self.window_ms
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: int) -> float:
        size = self.window_size_ms(now_ms)
        total = sum(s.value for s in self._samples)
        return total / (size / 1000.0) if size > 0 else 0.0

    def throttle_ms(self, quota: float, now_ms: int) -> int:
        """Kafka's QuotaUtils.throttleTime: 0 within the quota, else the time to get back under it."""
        value = self.measure(now_ms)
        if value <= quota:
            return 0
        return round((value - quota) / quota * self.window_size_ms(now_ms))


class QuotaSensors:
    """One broker's rates per quota type and metric tags, checked against the cluster's quota configs."""

    def __init__(self, quotas: ClientQuotas, samples: int = SAMPLES, window_ms: int = WINDOW_MS) -> None:
        self.quotas = quotas
        self.samples = samples
        self.window_ms = window_ms
        self.rates: dict[tuple[str, str, str], Rate] = {}

    def _rate(self, key: tuple[str, str, str]) -> Rate:
        rate = self.rates.get(key)
        if rate is None:
            rate = self.rates[key] = Rate(self.samples, self.window_ms)
        return rate

    def record(self, quota_key: str, user: str, client_id: str, value: float, now_ms: int,
               bounded: bool = False) -> int:
        """Record `value` for a client under quota_key; the throttle time in ms (0: no quota or within it).
        bounded: capped at one window (request_percentage, as Kafka's ClientRequestQuotaManager)."""
        applied = self.quotas.applied(quota_key, user, client_id)
        if applied is None:
            return 0
        rate = self._rate((quota_key, applied.user, applied.client_id))
        rate.record(value, now_ms)
        throttle = rate.throttle_ms(applied.value, now_ms)
        return min(throttle, self.window_ms) if bounded else throttle

    def unrecord(self, quota_key: str, user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back a value recorded (a throttled Fetch answers empty, so its bytes do not count)."""
        applied = self.quotas.applied(quota_key, user, client_id)
        if applied is not None:
            self._rate((quota_key, applied.user, applied.client_id)).record(-value, now_ms)

    def produce(self, user: str, client_id: str, request_bytes: int, now_ms: int) -> int:
        return self.record(PRODUCER_BYTE_RATE, user, client_id, request_bytes, now_ms)

    def fetch(self, user: str, client_id: str, response_bytes: int, now_ms: int) -> int:
        return self.record(CONSUMER_BYTE_RATE, user, client_id, response_bytes, now_ms)

    def request_time(self, user: str, client_id: str, seconds: float, now_ms: int) -> int:
        """Handler time as Kafka's request quota counts it: percent of one thread (100 per second)."""
        return self.record(REQUEST_PERCENTAGE, user, client_id, seconds * 100.0, now_ms, bounded=True)

    def mutation_throttle(self, user: str, client_id: str, now_ms: int) -> int:
        """Before a topic mutation: the throttle time if the client is already over its
        controller_mutation_rate (Kafka's strict check), else 0."""
        applied = self.quotas.applied(CONTROLLER_MUTATION_RATE, user, client_id)
        if applied is None:
            return 0
        return self._rate((CONTROLLER_MUTATION_RATE, applied.user, applied.client_id)).throttle_ms(applied.value, now_ms)

    def record_mutations(self, user: str, client_id: str, partitions: int, now_ms: int) -> int:
        return self.record(CONTROLLER_MUTATION_RATE, user, client_id, partitions, now_ms)

    def connection(self, ip: str, now_ms: int) -> int:
        """A new connection from ip: 0 to accept it, else the throttle time (the connection is refused and
        not counted), as Kafka's ConnectionQuotas with a connection_creation_rate for that ip."""
        quota = self.quotas.ip_rate(ip)
        if quota is None:
            return 0
        rate = self._rate(("connection_creation_rate", ip, ""))
        rate.record(1.0, now_ms)
        throttle = min(rate.throttle_ms(quota, now_ms), self.window_ms)
        if throttle > 0:
            rate.record(-1.0, now_ms)
        return throttle
