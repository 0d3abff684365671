"""Dynamic broker configs, SCRAM credentials, ACL bindings and client quotas kept in the data dir's metadata file.

Kafka keeps these in its metadata log (`__cluster_metadata`): ConfigRecord (resource BROKER, name "" for the
cluster-wide default, the node id for one broker), UserScramCredentialRecord (name, mechanism, salt,
StoredKey, ServerKey, iterations: never the password), AccessControlEntryRecord (one ACL binding) and
ClientQuotaRecord (an entity's quota key and value). This
broker keeps the same facts in `mockbroker-metadata.json` (metadata.py), rewritten (atomically, as every
change of that file) after each change:

- broker configs: what AlterConfigs / IncrementalAlterConfigs set on a BROKER resource (BrokerConfig's
  dynamic layers, `on_dynamic_change`);
- SCRAM credentials: what AlterUserScramCredentials and `broker.add_user` create (Credentials.on_change).
  PLAIN passwords are configuration (Kafka's JAAS `user_<name>` entries), not stored: `users=` and
  `add_user` give them again at each start;
- ACL bindings: `broker.add_acl`, CreateAcls, DeleteAcls (AclStore.on_change). A broker started without an
  authorizer keeps the stored bindings in the file untouched (Kafka's metadata log keeps them too), and
  they apply again once a broker starts with one;
- client quotas: AlterClientQuotas and `broker.set_quota` (ClientQuotas.on_change), each entity with its
  values; a default entity's name is null, as in Kafka's records;
- group configs: IncrementalAlterConfigs on GROUP resources (BrokerConfig.group_configs, the same
  on_dynamic_change), Kafka's ConfigRecords of resource type GROUP.

At start `load` puts what the file holds back into the broker before it serves anything; an entry that no
longer makes sense (a config that is not dynamic, an unknown mechanism, a binding Kafka would refuse) is
skipped with a warning, and the broker starts.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker.errors import KafkaError

if TYPE_CHECKING:
    from mockbroker.security import BrokerSecurity
    from mockbroker.state.configs import BrokerConfig
    from mockbroker.state.quotas import ClientQuotas
    from mockbroker.storage.metadata import ClusterMetadata

Warn = Callable[..., None]


class StoredSettings:
    """The dynamic broker configs, SCRAM credentials and ACLs of one broker, between the broker and the file."""

    def __init__(self, config: BrokerConfig, security: BrokerSecurity | None, node_id: int,
                 quotas: ClientQuotas | None = None) -> None:
        self.config = config
        self.quotas = quotas
        self.security = security
        self.node_id = node_id
        # What the file holds that this broker has no place for: other nodes' per-broker configs, and the
        # ACL bindings when no authorizer is on. Written back as they were.
        self.other_broker_configs: dict[str, dict[str, str]] = {}
        self.kept_acls: list[dict[str, str]] = []

    # -- loading ---------------------------------------------------------------------------------
    def load(self, meta: ClusterMetadata, warn: Warn) -> None:
        for name, configs in meta.broker_configs.items():
            if name == "":
                self._load_configs(configs, per_broker=False, warn=warn)
            elif name == str(self.node_id):
                self._load_configs(configs, per_broker=True, warn=warn)
            else:
                self.other_broker_configs[name] = dict(configs)
        for entry in meta.scram_credentials:
            self._load_scram(entry, warn)
        self._load_acls(meta.acls, warn)
        self._load_quotas(meta.client_quotas, warn)
        # Group configs as they were set (IncrementalAlterConfigs checked them then); GroupConfigs reads them.
        self.config.group_configs.update({group: dict(configs) for group, configs in meta.group_configs.items()})

    def _load_configs(self, configs: dict[str, str], *, per_broker: bool, warn: Warn) -> None:
        good = {}
        for key, value in configs.items():
            try:
                self.config.validate_dynamic({key: value})
            except KafkaError as exc:
                warn("stored broker config %s=%r skipped: %s", key, value, exc.message)
                continue
            good[key] = value
        self.config.replace_dynamic(good, per_broker=per_broker)

    def _load_scram(self, entry: dict[str, Any], warn: Warn) -> None:
        from mockbroker.security.credentials import MAX_ITERATIONS, SCRAM_MECHANISMS, ScramCredential

        if self.security is None:
            return
        try:
            name, mechanism, iterations = str(entry["name"]), str(entry["mechanism"]), int(entry["iterations"])
            salt, stored_key, server_key = (base64.b64decode(entry[k], validate=True)
                                            for k in ("salt", "stored_key", "server_key"))
        except (KeyError, TypeError, ValueError) as exc:
            warn("stored SCRAM credential %r skipped: %s", entry, exc)
            return
        if mechanism not in SCRAM_MECHANISMS or not name or not 0 < iterations <= MAX_ITERATIONS:
            warn("stored SCRAM credential of %r skipped: mechanism %s, %d iterations", name, mechanism, iterations)
            return
        self.security.credentials.set_scram(name, mechanism, ScramCredential(salt, stored_key, server_key,
                                                                             iterations))

    def _load_acls(self, entries: list[dict[str, str]], warn: Warn) -> None:
        from mockbroker.security.acls import (
            AclBinding,
            invalid_binding_reason,
            operation,
            pattern_type,
            permission,
            resource_type,
        )

        authorizer = self.security.authorizer if self.security is not None else None
        if authorizer is None:
            self.kept_acls = [dict(e) for e in entries]
            return
        for entry in entries:
            try:
                binding = AclBinding(resource_type(entry["resource_type"]), entry["resource_name"],
                                     pattern_type(entry["pattern_type"]), entry["principal"], entry["host"],
                                     operation(entry["operation"]), permission(entry["permission"]))
            except (KeyError, ValueError) as exc:
                warn("stored ACL binding %r skipped: %s", entry, exc)
                continue
            reason = invalid_binding_reason(binding)
            if reason is not None:
                warn("stored ACL binding %r skipped: %s", entry, reason)
                continue
            authorizer.acls.add(binding)

    def _load_quotas(self, entries: list[dict[str, Any]], warn: Warn) -> None:
        if self.quotas is None:
            return
        for entry in entries:
            try:
                components = [(str(t), None if n is None else str(n)) for t, n in dict(entry["entity"]).items()]
                ops: list[tuple[str, float | None]] = [(str(k), float(v)) for k, v in dict(entry["values"]).items()]
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                warn("stored client quota %r skipped: %s", entry, exc)
                continue
            result = self.quotas.alter([(components, ops)])[0]
            if result.error:
                warn("stored client quota %r skipped: %s", entry, result.message)

    # -- writing ---------------------------------------------------------------------------------
    def fill(self, meta: ClusterMetadata) -> None:
        """Put the broker's current settings into `meta` (before it is written)."""
        configs = dict(self.other_broker_configs)
        for name, per_broker in (("", False), (str(self.node_id), True)):
            layer = self.config.dynamic_layer(per_broker)
            if layer:
                configs[name] = layer
        meta.broker_configs = configs
        meta.scram_credentials = self._scram_entries()
        authorizer = self.security.authorizer if self.security is not None else None
        meta.acls = [b.as_dict() for b in authorizer.acls] if authorizer is not None else list(self.kept_acls)
        if self.quotas is not None:
            meta.client_quotas = [{"entity": dict(entity), "values": dict(values)}
                                  for entity, values in self.quotas.entities.items()]
        meta.group_configs = {group: dict(configs) for group, configs in sorted(self.config.group_configs.items())}

    def _scram_entries(self) -> list[dict[str, Any]]:
        if self.security is None:
            return []
        out = []
        for name, by_mechanism in sorted(self.security.credentials.scram.items()):
            for mechanism, c in sorted(by_mechanism.items()):
                out.append({"name": name, "mechanism": mechanism, "salt": _b64(c.salt),
                            "stored_key": _b64(c.stored_key), "server_key": _b64(c.server_key),
                            "iterations": c.iterations})
        return out

    # -- hooks -----------------------------------------------------------------------------------
    def attach(self, on_change: Callable[[], None] | None) -> None:
        """Call on_change after every later change (None: stop calling)."""
        self.config.on_dynamic_change = on_change
        if self.quotas is not None:
            self.quotas.on_change = on_change
        if self.security is None:
            return
        self.security.credentials.on_change = on_change
        if self.security.authorizer is not None:
            self.security.authorizer.acls.on_change = on_change


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
