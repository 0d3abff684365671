"""The control API's topic configs endpoint (listed in json_api.ROUTES): a topic's effective configs.

    GET /topics/{name}/configs   every topic config with its value and where the value comes from

The entries are the ones DescribeConfigs answers for a TOPIC resource (the topic's own `TopicConfig.describe`:
every topic config the broker models, sorted by name): `source` is Kafka's ConfigSource name (TOPIC_CONFIG
for a setting on the topic, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG or STATIC_BROKER_CONFIG
for a broker setting it falls back to, DEFAULT_CONFIG for Kafka's default) and `is_default` is true only
for DEFAULT_CONFIG. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.http.request import HttpError, Request


def topic_configs(api: Any, req: Request) -> Any:
    name = req.params["name"]
    topic = api.broker.cluster.topic(name)
    if topic is None:
        raise HttpError(404, "unknown_topic", f"no topic {name!r}")
    configs = [{"name": key, "value": value, "source": source.name, "is_default": source.name == "DEFAULT_CONFIG",
                "type": kind.name}
               for key, value, source, kind in topic.config.describe()]
    return {"topic": topic.name, "configs": configs}


ROUTES: list[tuple[str, str, Callable[..., Any], str]] = [
    ("GET", "/topics/{name}/configs", topic_configs,
     "a topic's effective configs: value, source (TOPIC_CONFIG, a broker layer or DEFAULT_CONFIG), is_default"),
]
