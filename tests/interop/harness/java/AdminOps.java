import static java.lang.Math.max;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The {@code admin} command: one Admin client, one or more operations, one output line each
 * ({@code {"type": "result", "op": ...}} or {@code {"type": "error", "op": ...}}). An operation
 * that fails does not stop the next one. Per-topic failures inside a multi-topic operation are
 * reported inside its result (an entry with "error").
 */
final class AdminOps {
    static int run(JsonObject a) throws Exception {
        long timeout = KafkaHarness.timeoutMs(a);
        List<JsonObject> ops = new ArrayList<>();
        JsonArray list = Json.arr(a, "ops");
        if (list != null) {
            list.forEach(e -> ops.add(e.getAsJsonObject()));
        } else if (Json.has(a, "op")) {
            ops.add(a);
        } else {
            throw new IllegalArgumentException("missing argument: op (or ops)");
        }
        Properties p = KafkaHarness.clientProps(a);
        p.putIfAbsent("default.api.timeout.ms", Long.toString(timeout));
        p.putIfAbsent("request.timeout.ms", Long.toString(max(1000, timeout / 2)));
        try (Admin admin = Admin.create(p)) {
            AdminOps ops0 = new AdminOps(admin, timeout);
            for (JsonObject op : ops) {
                String name = Json.requireStr(op, "op");
                JsonObject line = Json.obj("type", "result", "op", name);
                try {
                    ops0.dispatch(name, op, line);
                } catch (Exception e) {
                    line = Json.withError(Json.obj("type", "error", "op", name), e);
                }
                Json.emit(line);
            }
            admin.close(Duration.ofMillis(Math.min(timeout, 5000)));
        }
        return 0;
    }

    private final Admin admin;
    private final long timeout;

    private AdminOps(Admin admin, long timeout) {
        this.admin = admin;
        this.timeout = timeout;
    }

    private <T> T get(KafkaFuture<T> f) throws ExecutionException, InterruptedException, TimeoutException {
        return f.get(timeout, TimeUnit.MILLISECONDS);
    }

    private void dispatch(String name, JsonObject op, JsonObject out) throws Exception {
        switch (name) {
            case "listTopics" -> listTopics(op, out);
            case "describeTopics" -> describeTopics(op, out);
            case "listOffsets" -> listOffsets(op, out);
            case "createTopics" -> createTopics(op, out);
            case "deleteTopics" -> deleteTopics(op, out);
            case "describeCluster" -> describeCluster(out);
            case "describeConfigs" -> describeConfigs(op, out);
            case "incrementalAlterConfigs" -> incrementalAlterConfigs(op, out);
            case "createPartitions" -> createPartitions(op, out);
            case "deleteRecords" -> deleteRecords(op, out);
            case "describeConsumerGroups" -> describeConsumerGroups(op, out);
            case "listConsumerGroupOffsets" -> listConsumerGroupOffsets(op, out);
            case "alterUserScramCredentials" -> ScramOps.alter(admin, timeout, op, out);
            case "describeUserScramCredentials" -> ScramOps.describe(admin, timeout, op, out);
            case "electLeaders" -> ClusterAdminOps.electLeaders(admin, timeout, op, out);
            case "alterPartitionReassignments" -> ClusterAdminOps.alterReassignments(admin, timeout, op, out);
            case "listPartitionReassignments" -> ClusterAdminOps.listReassignments(admin, timeout, op, out);
            case "describeLogDirs" -> ClusterAdminOps.describeLogDirs(admin, timeout, op, out);
            case "createAcls" -> AclOps.create(admin, timeout, op, out);
            case "describeAcls" -> AclOps.describe(admin, timeout, op, out);
            case "deleteAcls" -> AclOps.delete(admin, timeout, op, out);
            case "alterClientQuotas" -> QuotaOps.alter(admin, timeout, op, out);
            case "describeClientQuotas" -> QuotaOps.describe(admin, timeout, op, out);
            case "listShareGroups" -> ShareAdminOps.list(admin, timeout, op, out);
            case "describeShareGroups" -> ShareAdminOps.describe(admin, timeout, op, out);
            case "listShareGroupOffsets" -> ShareAdminOps.offsets(admin, timeout, op, out);
            case "alterShareGroupOffsets" -> ShareAdminOps.alterOffsets(admin, timeout, op, out);
            case "deleteShareGroupOffsets" -> ShareAdminOps.deleteOffsets(admin, timeout, op, out);
            default -> throw new IllegalArgumentException("unknown admin op " + name);
        }
    }

    static List<String> strings(JsonObject o, String key) {
        List<String> out = new ArrayList<>();
        JsonArray a = Json.arr(o, key);
        if (a != null) {
            a.forEach(e -> out.add(e.getAsString()));
        }
        return out;
    }

    static JsonObject node(Node n) {
        if (n == null || n.isEmpty()) {
            return null;
        }
        return Json.obj("id", n.id(), "host", n.host(), "port", n.port(), "rack", n.rack());
    }

    static List<Integer> ids(List<Node> nodes) {
        List<Integer> out = new ArrayList<>();
        if (nodes != null) {
            nodes.forEach(n -> out.add(n.id()));
        }
        return out;
    }

    // ------------------------------------------------------------------ topics

    private void listTopics(JsonObject op, JsonObject out) throws Exception {
        Collection<TopicListing> listings = get(admin.listTopics(
                new ListTopicsOptions().listInternal(Json.bool(op, "internal", false))).listings());
        List<TopicListing> sorted = new ArrayList<>(listings);
        sorted.sort((x, y) -> x.name().compareTo(y.name()));
        JsonArray names = new JsonArray();
        JsonArray topics = new JsonArray();
        for (TopicListing t : sorted) {
            names.add(t.name());
            topics.add(Json.obj("name", t.name(), "topic_id", String.valueOf(t.topicId()), "internal", t.isInternal()));
        }
        out.add("names", names);
        out.add("topics", topics);
    }

    private void describeTopics(JsonObject op, JsonObject out) throws Exception {
        DescribeTopicsResult r = admin.describeTopics(strings(op, "topics"));
        JsonArray topics = new JsonArray();
        for (Map.Entry<String, KafkaFuture<TopicDescription>> e : r.topicNameValues().entrySet()) {
            try {
                topics.add(describe(get(e.getValue())));
            } catch (ExecutionException ex) {
                topics.add(Json.withError(Json.obj("name", e.getKey()), ex));
            }
        }
        out.add("topics", topics);
    }

    static JsonObject describe(TopicDescription d) {
        JsonArray parts = new JsonArray();
        for (TopicPartitionInfo p : d.partitions()) {
            parts.add(Json.obj("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                    "replicas", ids(p.replicas()), "isr", ids(p.isr()), "elr", ids(p.elr())));
        }
        return Json.obj("name", d.name(), "topic_id", String.valueOf(d.topicId()), "internal", d.isInternal(),
                "partitions", parts);
    }

    private List<TopicPartition> partitions(JsonObject op, String topic) throws Exception {
        List<TopicPartition> tps = new ArrayList<>();
        JsonArray parts = Json.arr(op, "partitions");
        if (parts != null) {
            parts.forEach(p -> tps.add(new TopicPartition(topic, p.getAsInt())));
            return tps;
        }
        TopicDescription d = get(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic);
        d.partitions().forEach(p -> tps.add(new TopicPartition(topic, p.partition())));
        return tps;
    }

    static OffsetSpec offsetSpec(JsonElement spec) {
        if (spec == null || spec.isJsonNull()) {
            return OffsetSpec.latest();
        }
        if (spec.isJsonObject()) {
            return OffsetSpec.forTimestamp(spec.getAsJsonObject().get("timestamp").getAsLong());
        }
        if (spec.getAsJsonPrimitive().isNumber()) {
            return OffsetSpec.forTimestamp(spec.getAsLong());
        }
        return switch (spec.getAsString()) {
            case "earliest" -> OffsetSpec.earliest();
            case "latest" -> OffsetSpec.latest();
            case "max_timestamp" -> OffsetSpec.maxTimestamp();
            case "earliest_local" -> OffsetSpec.earliestLocal();
            case "latest_tiered" -> OffsetSpec.latestTiered();
            default -> throw new IllegalArgumentException("spec must be earliest, latest, max_timestamp, "
                    + "earliest_local, latest_tiered or {\"timestamp\": ms}: " + spec);
        };
    }

    private void listOffsets(JsonObject op, JsonObject out) throws Exception {
        String topic = Json.requireStr(op, "topic");
        OffsetSpec spec = offsetSpec(op.get("spec"));
        Map<TopicPartition, OffsetSpec> query = new LinkedHashMap<>();
        for (TopicPartition tp : partitions(op, topic)) {
            query.put(tp, spec);
        }
        String iso = Json.str(op, "isolation_level", "read_uncommitted");
        IsolationLevel level = switch (iso) {
            case "read_uncommitted" -> IsolationLevel.READ_UNCOMMITTED;
            case "read_committed" -> IsolationLevel.READ_COMMITTED;
            default -> throw new IllegalArgumentException("isolation_level must be read_uncommitted or read_committed");
        };
        ListOffsetsResult r = admin.listOffsets(query, new ListOffsetsOptions(level));
        JsonArray offsets = new JsonArray();
        for (TopicPartition tp : query.keySet()) {
            JsonObject o = Json.obj("topic", tp.topic(), "partition", tp.partition());
            try {
                ListOffsetsResult.ListOffsetsResultInfo info = get(r.partitionResult(tp));
                o.add("offset", Json.of(info.offset()));
                o.add("timestamp", Json.of(info.timestamp()));
                o.add("leader_epoch", Json.of(info.leaderEpoch()));
            } catch (ExecutionException ex) {
                Json.withError(o, ex);
            }
            offsets.add(o);
        }
        out.add("offsets", offsets);
    }

    private void createTopics(JsonObject op, JsonObject out) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (JsonElement e : Json.arr(op, "topics")) {
            JsonObject t = e.getAsJsonObject();
            Integer parts = Json.integer(t, "partitions", null);
            Integer rf = Json.integer(t, "replication_factor", null);
            NewTopic nt = new NewTopic(Json.requireStr(t, "name"), Optional.ofNullable(parts),
                    Optional.ofNullable(rf == null ? null : rf.shortValue()));
            JsonObject configs = Json.object(t, "configs");
            if (configs != null) {
                Map<String, String> m = new LinkedHashMap<>();
                configs.entrySet().forEach(c -> m.put(c.getKey(), Json.configValue(c.getValue())));
                nt.configs(m);
            }
            topics.add(nt);
        }
        CreateTopicsResult r = admin.createTopics(topics,
                new CreateTopicsOptions().validateOnly(Json.bool(op, "validate_only", false)));
        JsonArray results = new JsonArray();
        for (NewTopic t : topics) {
            JsonObject o = Json.obj("name", t.name());
            try {
                get(r.values().get(t.name()));
                o.addProperty("ok", true);
                o.add("topic_id", Json.of(String.valueOf(get(r.topicId(t.name())))));
                o.add("partitions", Json.of(get(r.numPartitions(t.name()))));
                o.add("replication_factor", Json.of(get(r.replicationFactor(t.name()))));
            } catch (ExecutionException ex) {
                o.addProperty("ok", false);
                Json.withError(o, ex);
            }
            results.add(o);
        }
        out.add("topics", results);
    }

    private void deleteTopics(JsonObject op, JsonObject out) throws Exception {
        Map<String, KafkaFuture<Void>> r = admin.deleteTopics(strings(op, "topics")).topicNameValues();
        JsonArray results = new JsonArray();
        for (Map.Entry<String, KafkaFuture<Void>> e : r.entrySet()) {
            JsonObject o = Json.obj("name", e.getKey());
            try {
                get(e.getValue());
                o.addProperty("ok", true);
            } catch (ExecutionException ex) {
                o.addProperty("ok", false);
                Json.withError(o, ex);
            }
            results.add(o);
        }
        out.add("topics", results);
    }

    // ------------------------------------------------------------------ cluster and configs

    private void describeCluster(JsonObject out) throws Exception {
        DescribeClusterResult r = admin.describeCluster();
        List<JsonObject> nodes = new ArrayList<>();
        for (Node n : get(r.nodes())) {
            nodes.add(node(n));
        }
        nodes.sort((x, y) -> Integer.compare(x.get("id").getAsInt(), y.get("id").getAsInt()));
        out.add("cluster_id", Json.of(get(r.clusterId())));
        out.add("controller", Json.of(node(get(r.controller()))));
        out.add("nodes", Json.of(nodes));
    }

    private static List<ConfigResource> resources(JsonObject op) {
        List<ConfigResource> out = new ArrayList<>();
        strings(op, "topics").forEach(t -> out.add(new ConfigResource(ConfigResource.Type.TOPIC, t)));
        strings(op, "brokers").forEach(b -> out.add(new ConfigResource(ConfigResource.Type.BROKER, b)));
        if (Json.has(op, "topic")) {
            out.add(new ConfigResource(ConfigResource.Type.TOPIC, Json.str(op, "topic", null)));
        }
        if (Json.has(op, "broker")) {
            out.add(new ConfigResource(ConfigResource.Type.BROKER, Json.str(op, "broker", null)));
        }
        if (Json.has(op, "client_metrics")) {  // a KIP-714 subscription
            out.add(new ConfigResource(ConfigResource.Type.CLIENT_METRICS, Json.str(op, "client_metrics", null)));
        }
        return out;
    }

    private void describeConfigs(JsonObject op, JsonObject out) throws Exception {
        List<ConfigResource> resources = resources(op);
        List<String> names = strings(op, "names");
        Map<ConfigResource, KafkaFuture<Config>> r = admin.describeConfigs(resources).values();
        JsonArray results = new JsonArray();
        for (ConfigResource res : resources) {
            JsonObject o = Json.obj("type", res.type().name().toLowerCase(), "name", res.name());
            try {
                JsonObject configs = new JsonObject();
                List<ConfigEntry> entries = new ArrayList<>(get(r.get(res)).entries());
                entries.sort((x, y) -> x.name().compareTo(y.name()));
                for (ConfigEntry c : entries) {
                    if (names.isEmpty() || names.contains(c.name())) {
                        configs.add(c.name(), Json.obj("value", c.value(), "source", c.source().name(),
                                "read_only", c.isReadOnly(), "sensitive", c.isSensitive()));
                    }
                }
                o.add("configs", configs);
            } catch (ExecutionException ex) {
                Json.withError(o, ex);
            }
            results.add(o);
        }
        out.add("resources", results);
    }

    private void incrementalAlterConfigs(JsonObject op, JsonObject out) throws Exception {
        List<AlterConfigOp> changes = new ArrayList<>();
        JsonObject set = Json.object(op, "set");
        if (set != null) {
            set.entrySet().forEach(e -> changes.add(new AlterConfigOp(
                    new ConfigEntry(e.getKey(), Json.configValue(e.getValue())), AlterConfigOp.OpType.SET)));
        }
        strings(op, "delete").forEach(k -> changes.add(new AlterConfigOp(new ConfigEntry(k, null),
                AlterConfigOp.OpType.DELETE)));
        Map<ConfigResource, Collection<AlterConfigOp>> request = new LinkedHashMap<>();
        for (ConfigResource res : resources(op)) {
            request.put(res, changes);
        }
        Map<ConfigResource, KafkaFuture<Void>> r = admin.incrementalAlterConfigs(request).values();
        JsonArray results = new JsonArray();
        for (ConfigResource res : request.keySet()) {
            JsonObject o = Json.obj("type", res.type().name().toLowerCase(), "name", res.name());
            try {
                get(r.get(res));
                o.addProperty("ok", true);
            } catch (ExecutionException ex) {
                o.addProperty("ok", false);
                Json.withError(o, ex);
            }
            results.add(o);
        }
        out.add("resources", results);
    }

    // ------------------------------------------------------------------ partitions and records

    private void createPartitions(JsonObject op, JsonObject out) throws Exception {
        String topic = Json.requireStr(op, "topic");
        int count = Json.integer(op, "count", 0);
        get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(count))).all());
        out.addProperty("ok", true);
    }

    private void deleteRecords(JsonObject op, JsonObject out) throws Exception {
        String topic = Json.requireStr(op, "topic");
        Map<TopicPartition, RecordsToDelete> request = new LinkedHashMap<>();
        JsonObject offsets = Json.object(op, "offsets");
        if (offsets == null) {
            throw new IllegalArgumentException("missing argument: offsets {\"<partition>\": offset}");
        }
        offsets.entrySet().forEach(e -> request.put(new TopicPartition(topic, Integer.parseInt(e.getKey())),
                RecordsToDelete.beforeOffset(e.getValue().getAsLong())));
        var r = admin.deleteRecords(request).lowWatermarks();
        JsonArray results = new JsonArray();
        for (TopicPartition tp : request.keySet()) {
            JsonObject o = Json.obj("topic", tp.topic(), "partition", tp.partition());
            try {
                o.add("low_watermark", Json.of(get(r.get(tp)).lowWatermark()));
            } catch (ExecutionException ex) {
                Json.withError(o, ex);
            }
            results.add(o);
        }
        out.add("partitions", results);
    }

    // ------------------------------------------------------------------ groups

    private void describeConsumerGroups(JsonObject op, JsonObject out) throws Exception {
        List<String> groups = strings(op, "groups");
        Map<String, KafkaFuture<ConsumerGroupDescription>> r = admin.describeConsumerGroups(groups).describedGroups();
        JsonArray results = new JsonArray();
        for (String g : groups) {
            JsonObject o = Json.obj("group_id", g);
            try {
                ConsumerGroupDescription d = get(r.get(g));
                JsonArray members = new JsonArray();
                for (MemberDescription m : d.members()) {
                    List<JsonObject> tps = new ArrayList<>();
                    for (TopicPartition tp : KafkaHarness.sorted(m.assignment().topicPartitions())) {
                        tps.add(Json.obj("topic", tp.topic(), "partition", tp.partition()));
                    }
                    members.add(Json.obj("member_id", m.consumerId(), "group_instance_id", m.groupInstanceId(),
                            "client_id", m.clientId(), "host", m.host(), "assignment", tps));
                }
                o.add("state", Json.of(String.valueOf(d.groupState())));
                o.add("type", Json.of(String.valueOf(d.type())));
                o.add("simple", Json.of(d.isSimpleConsumerGroup()));
                o.add("assignor", Json.of(d.partitionAssignor()));
                o.add("coordinator", Json.of(node(d.coordinator())));
                o.add("members", members);
            } catch (ExecutionException ex) {
                Json.withError(o, ex);
            }
            results.add(o);
        }
        out.add("groups", results);
    }

    private void listConsumerGroupOffsets(JsonObject op, JsonObject out) throws Exception {
        String group = Json.requireStr(op, "group");
        Map<TopicPartition, OffsetAndMetadata> offsets =
                get(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
        JsonArray list = new JsonArray();
        for (TopicPartition tp : KafkaHarness.sorted(offsets.keySet())) {
            OffsetAndMetadata om = offsets.get(tp);
            list.add(Json.obj("topic", tp.topic(), "partition", tp.partition(),
                    "offset", om == null ? null : om.offset(),
                    "metadata", om == null ? null : om.metadata(),
                    "leader_epoch", om == null ? null : om.leaderEpoch()));
        }
        out.addProperty("group", group);
        out.add("offsets", list);
    }
}
