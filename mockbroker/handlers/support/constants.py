"""Protocol constants several APIs answer with, defined once.

- NOT_REQUESTED: the authorized-operations fields' "not asked for" (INT32_MIN).
- TOPIC_OPERATIONS, CLUSTER_OPERATIONS: the authorized-operations bits of every operation on a topic / the
  cluster (what is answered without an authorizer). AclOperation codes: READ 3, WRITE 4, CREATE 5,
  DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
  IDEMPOTENT_WRITE 12.
- ConfigResource.Type ids: TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP.
- AUTHORIZATION_MESSAGES: Kafka's default messages of the authorization errors (Errors.message()).
"""

from __future__ import annotations

from mockbroker.protocol.errors import ErrorCode

NOT_REQUESTED = -2147483648
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
CLIENT_METRICS = 16
GROUP = 32
KNOWN_RESOURCE_TYPES = frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})

AUTHORIZATION_MESSAGES = {
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
}
