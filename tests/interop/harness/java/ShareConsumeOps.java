import static java.lang.Math.min;

import com.google.gson.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;

/**
 * The {@code share-consume} command: one member of a share group (KIP-932, KafkaShareConsumer).
 * It subscribes, polls, prints every record with its delivery count and acknowledges it.
 *
 * <pre>
 * share-consume {topic, group_id (or config group.id),
 *                ack?="implicit"   implicit: the client accepts a poll's records on the next poll;
 *                                  accept | release | reject: explicit mode, every record acknowledged
 *                                  with that type, then commitSync
 *                                  hold: explicit mode, the first poll's records printed and never
 *                                  acknowledged; then stop (the records stay acquired by this member)
 *                on_stop?="close"  close: close the consumer (it leaves the group; what it holds goes back);
 *                                  halt: end the process without closing (no leave: the member's records
 *                                  stay acquired until their locks or its session run out)
 *                max_records?      stop once this member printed this many records
 *                idle_ms?          stop when no record came for this long (after the first one)
 *                stop_after_ms?=60000, stop_file?, poll_ms?=100, config?}
 * -> started {group_id, ack}; record {topic,partition,offset,value,delivery_count};
 *    ack_error {topic, partition, error} (commitSync's answer); done {count, stopped}
 *    (printed after close, which acknowledges what is pending and leaves the group)
 * </pre>
 */
final class ShareConsumeOps {
    private ShareConsumeOps() {}

    static int run(JsonObject a) {
        long timeout = KafkaHarness.timeoutMs(a);
        Properties p = KafkaHarness.clientProps(a);
        p.put("key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
        if (Json.has(a, "group_id")) {
            p.put("group.id", Json.str(a, "group_id", null));
        }
        String ack = Json.str(a, "ack", "implicit");
        AcknowledgeType type = switch (ack) {
            case "implicit" -> null;
            case "accept" -> AcknowledgeType.ACCEPT;
            case "release" -> AcknowledgeType.RELEASE;
            case "reject" -> AcknowledgeType.REJECT;
            case "hold" -> null;
            default -> throw new IllegalArgumentException("ack must be implicit, accept, release, reject or hold: " + ack);
        };
        boolean hold = ack.equals("hold");
        boolean halt = Json.str(a, "on_stop", "close").equals("halt");
        p.put("share.acknowledgement.mode", type == null && !hold ? "implicit" : "explicit");
        Integer maxRecords = Json.integer(a, "max_records", null);
        Long idleMs = Json.lng(a, "idle_ms", null);
        long stopAfter = Json.lng(a, "stop_after_ms", 60_000L);
        long pollMs = Json.lng(a, "poll_ms", 100L);
        Path stopFile = Json.has(a, "stop_file") ? Path.of(Json.str(a, "stop_file", null)) : null;
        long start = System.currentTimeMillis();
        long lastRecord = -1;
        int count = 0;
        String stopped;
        KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p);
        try {
            c.subscribe(List.of(Json.requireStr(a, "topic")));
            Json.emit(Json.obj("type", "started", "group_id", p.get("group.id"), "ack", ack));
            while (true) {
                long now = System.currentTimeMillis();
                if (maxRecords != null && count >= maxRecords) {
                    stopped = "max_records";
                    break;
                }
                if (idleMs != null && lastRecord >= 0 && now - lastRecord >= idleMs) {
                    stopped = "idle";
                    break;
                }
                if (now - start >= stopAfter) {
                    stopped = "stop_after_ms";
                    break;
                }
                if (stopFile != null && Files.exists(stopFile)) {
                    stopped = "stop_file";
                    break;
                }
                if (hold && count > 0) {  // explicit mode: polling again would need the records acknowledged
                    stopped = "held";
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(pollMs));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    Optional<Short> delivered = r.deliveryCount();
                    Json.emit(Json.obj("type", "record", "topic", r.topic(), "partition", r.partition(),
                            "offset", r.offset(), "value", Json.utf8OrNull(r.value()),
                            "delivery_count", delivered.isPresent() ? (int) delivered.get() : null));
                    count++;
                    lastRecord = System.currentTimeMillis();
                    if (type != null) {
                        c.acknowledge(r, type);
                    }
                }
                if (type != null && !records.isEmpty()) {
                    Map<TopicIdPartition, Optional<KafkaException>> result = c.commitSync(Duration.ofMillis(timeout));
                    for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : result.entrySet()) {
                        if (e.getValue().isPresent()) {
                            Json.emit(Json.obj("type", "ack_error", "topic", e.getKey().topic(),
                                    "partition", e.getKey().partition(), "error", e.getValue().get().toString()));
                        }
                    }
                }
            }
        } finally {
            if (!halt) {
                c.close(Duration.ofMillis(min(timeout, 10000)));
            }
        }
        Json.emit(Json.obj("type", "done", "count", count, "stopped", stopped));
        if (halt) {
            System.out.flush();
            Runtime.getRuntime().halt(0);  // no close: no leave, no release
        }
        return 0;
    }
}
