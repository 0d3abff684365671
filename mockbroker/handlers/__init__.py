"""One home per Kafka API: kNN_name.py (or the package kNN_name/ with handler.py for a large one) holds
everything about API key NN, as kfake's NN_name.go does. Its header docstring says the versions served,
the behaviour, what its authorization check refuses and its error answer; the module registers all of
it with `@handler(ApiKey.X, min, max, authorize=..., error_response=...)` (mockbroker/dispatch.py).

What several APIs share lives in support/ (no handler there): no handler module imports another, nor
mockbroker.connection (tests/test_architecture.py). The authorization mechanism (Access, the guard)
is mockbroker/authorization/.
"""
