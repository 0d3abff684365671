import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The cluster operations of the {@code admin} command (AdminOps dispatches to them):
 * <pre>
 *   electLeaders {type: "preferred" | "unclean", partitions?: [{topic, partition}]}  (none: all)
 *       -> partitions {"topic-p": "ok" | {error, message}}
 *   alterPartitionReassignments {reassignments: [{topic, partition, replicas | null}]}
 *       -> partitions {"topic-p": "ok" | {error, message}}
 *   listPartitionReassignments {partitions?: [{topic, partition}]}
 *       -> reassignments {"topic-p": {replicas, adding, removing}}
 *   describeLogDirs {brokers: [id]}
 *       -> brokers {"id": {"dir": {error?, total_bytes, usable_bytes, replicas: {"topic-p": {size, offset_lag, future}}}}}
 * </pre>
 */
final class ClusterAdminOps {
    private ClusterAdminOps() {}

    static String key(TopicPartition tp) {
        return tp.topic() + "-" + tp.partition();
    }

    static Set<TopicPartition> partitions(JsonObject op) {
        JsonArray parts = Json.arr(op, "partitions");
        if (parts == null) {
            return null;
        }
        Set<TopicPartition> out = new HashSet<>();
        for (JsonElement e : parts) {
            JsonObject p = e.getAsJsonObject();
            out.add(new TopicPartition(Json.requireStr(p, "topic"), p.get("partition").getAsInt()));
        }
        return out;
    }

    static JsonObject outcomes(Map<TopicPartition, ? extends KafkaFuture<?>> futures, long timeout)
            throws InterruptedException {
        JsonObject results = new JsonObject();
        Map<String, KafkaFuture<?>> sorted = new TreeMap<>();
        futures.forEach((tp, f) -> sorted.put(key(tp), f));
        for (Map.Entry<String, KafkaFuture<?>> e : sorted.entrySet()) {
            try {
                e.getValue().get(timeout, TimeUnit.MILLISECONDS);
                results.addProperty(e.getKey(), "ok");
            } catch (ExecutionException | java.util.concurrent.TimeoutException ex) {
                results.add(e.getKey(), Json.withError(new JsonObject(), ex));
            }
        }
        return results;
    }

    static void electLeaders(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        ElectionType type = Json.str(op, "type", "preferred").equals("unclean")
                ? ElectionType.UNCLEAN : ElectionType.PREFERRED;
        Map<TopicPartition, Optional<Throwable>> got = admin.electLeaders(type, partitions(op))
                .partitions().get(timeout, TimeUnit.MILLISECONDS);
        JsonObject results = new JsonObject();
        new TreeMap<String, Optional<Throwable>>(keyed(got)).forEach((k, err) -> {
            if (err.isPresent()) {
                results.add(k, Json.withError(new JsonObject(), err.get()));
            } else {
                results.addProperty(k, "ok");
            }
        });
        out.add("partitions", results);
    }

    static <V> Map<String, V> keyed(Map<TopicPartition, V> m) {
        Map<String, V> out = new HashMap<>();
        m.forEach((tp, v) -> out.put(key(tp), v));
        return out;
    }

    static void alterReassignments(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        Map<TopicPartition, Optional<NewPartitionReassignment>> wanted = new HashMap<>();
        for (JsonElement e : Json.arr(op, "reassignments")) {
            JsonObject r = e.getAsJsonObject();
            TopicPartition tp = new TopicPartition(Json.requireStr(r, "topic"), r.get("partition").getAsInt());
            JsonElement replicas = r.get("replicas");
            if (replicas == null || replicas.isJsonNull()) {
                wanted.put(tp, Optional.empty());
            } else {
                List<Integer> ids = new ArrayList<>();
                replicas.getAsJsonArray().forEach(n -> ids.add(n.getAsInt()));
                wanted.put(tp, Optional.of(new NewPartitionReassignment(ids)));
            }
        }
        out.add("partitions", outcomes(admin.alterPartitionReassignments(wanted).values(), timeout));
    }

    static void listReassignments(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        Set<TopicPartition> tps = partitions(op);
        Map<TopicPartition, PartitionReassignment> got = (tps == null ? admin.listPartitionReassignments()
                : admin.listPartitionReassignments(tps)).reassignments().get(timeout, TimeUnit.MILLISECONDS);
        JsonObject results = new JsonObject();
        new TreeMap<>(keyed(got)).forEach((k, r) -> results.add(k, Json.obj("replicas", r.replicas(),
                "adding", r.addingReplicas(), "removing", r.removingReplicas())));
        out.add("reassignments", results);
    }

    static void describeLogDirs(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<Integer> brokers = new ArrayList<>();
        Json.arr(op, "brokers").forEach(b -> brokers.add(b.getAsInt()));
        Map<Integer, Map<String, LogDirDescription>> got = admin.describeLogDirs(brokers).allDescriptions()
                .get(timeout, TimeUnit.MILLISECONDS);
        JsonObject results = new JsonObject();
        for (Map.Entry<Integer, Map<String, LogDirDescription>> b : new TreeMap<>(got).entrySet()) {
            JsonObject dirs = new JsonObject();
            for (Map.Entry<String, LogDirDescription> d : b.getValue().entrySet()) {
                LogDirDescription desc = d.getValue();
                JsonObject replicas = new JsonObject();
                for (Map.Entry<String, ReplicaInfo> r : new TreeMap<>(keyed(desc.replicaInfos())).entrySet()) {
                    replicas.add(r.getKey(), Json.obj("size", r.getValue().size(), "offset_lag",
                            r.getValue().offsetLag(), "future", r.getValue().isFuture()));
                }
                JsonObject dir = Json.obj("total_bytes", desc.totalBytes().isPresent() ? desc.totalBytes().getAsLong() : null,
                        "usable_bytes", desc.usableBytes().isPresent() ? desc.usableBytes().getAsLong() : null,
                        "replicas", replicas);
                if (desc.error() != null) {
                    dir.addProperty("error", desc.error().getClass().getSimpleName());
                }
                dirs.add(d.getKey(), dir);
            }
            results.add(Integer.toString(b.getKey()), dirs);
        }
        out.add("brokers", results);
    }
}
