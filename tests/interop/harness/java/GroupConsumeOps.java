import static java.lang.Math.max;
import static java.lang.Math.min;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * The {@code group-consume} command: one member of a consumer group (classic or KIP-848, as the
 * client's group.protocol says; partition.assignment.strategy and the rest pass through "config").
 * It subscribes, polls, prints every record, and commits what it printed synchronously after each
 * poll; offsets a failed commit left behind are committed in onPartitionsRevoked, before the
 * partitions go to another member. Rebalance callbacks are printed as they happen.
 *
 * <pre>
 * group-consume {topic | topics | pattern | subscription_pattern, group_id (or config group.id),
 *                max_records?      stop once this member printed this many records
 *                idle_ms?          stop when no record came for this long (after the first assignment)
 *                stop_after_ms?=60000   stop after this long
 *                stop_file?        stop as soon as this file exists (the test's switch)
 *                stall_file?       while this file exists, do not call poll (a stuck application;
 *                                  the heartbeat thread goes on, max.poll.interval.ms runs out)
 *                poll_ms?=100, config?}
 * pattern subscribes with a java.util.regex Pattern (matched by the client against the topics in
 * its metadata); subscription_pattern with a SubscriptionPattern (RE2J, matched by the broker: only
 * for group.protocol=consumer).
 * -> started {group_id, protocol}; assigned|revoked|lost {partitions, at_ms};
 *    stalled {at_ms} / resumed {at_ms} (stall_file appearing / going away);
 *    record {topic,partition,offset,key,value,...}; committed {offsets, where: poll|revoked|close};
 *    commit_error {offsets, where, error, ...};
 *    client_race {error, at_ms, rewound} (poll retried from the printed positions, see rewindAfterRace);
 *    done {count, stopped: max_records|idle|stop_after_ms|stop_file, assignment, generation, member_id}
 *    (printed after close, which leaves the group)
 * </pre>
 */
final class GroupConsumeOps {
    /** The message of the client's own position race in poll (see loop). */
    private static final String POSITION_RACE = "Cannot set a new position without a valid current position";
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Duration timeout;
    private final long start = System.currentTimeMillis();
    /** Offsets of printed records not committed yet. */
    private final Map<TopicPartition, OffsetAndMetadata> pending = new LinkedHashMap<>();
    /** Offset after the last record printed of each assigned partition (since its assignment). */
    private final Map<TopicPartition, Long> printedUpTo = new HashMap<>();
    private final boolean resetsToEarliest;
    private boolean everAssigned;

    private GroupConsumeOps(KafkaConsumer<byte[], byte[]> consumer, Duration timeout, boolean resetsToEarliest) {
        this.consumer = consumer;
        this.timeout = timeout;
        this.resetsToEarliest = resetsToEarliest;
    }

    static int run(JsonObject a) {
        long timeout = KafkaHarness.timeoutMs(a);
        Properties p = KafkaHarness.consumerProps(a, timeout);
        if (Json.has(a, "group_id")) {
            p.put("group.id", Json.str(a, "group_id", null));
        }
        if (!p.containsKey("group.id")) {
            throw new IllegalArgumentException("missing argument: group_id (or config group.id)");
        }
        p.put("enable.auto.commit", "false");
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        GroupConsumeOps ops = new GroupConsumeOps(c, Duration.ofMillis(timeout),
                "earliest".equals(p.getProperty("auto.offset.reset")));
        String stopped;
        int count;
        try {
            Json.emit(Json.obj("type", "started", "group_id", p.get("group.id"),
                    "protocol", p.getOrDefault("group.protocol", "classic")));
            int[] counted = new int[1];
            stopped = ops.loop(a, counted);
            count = counted[0];
            ops.commitPending(null, "close");
        } catch (RuntimeException e) {
            c.close(CloseOptions.timeout(Duration.ofMillis(min(timeout, 5000))));
            throw e;
        }
        JsonArray assignment = CtpOps.tps(c.assignment());
        ConsumerGroupMetadata gm = c.groupMetadata();
        c.close(CloseOptions.timeout(Duration.ofMillis(min(timeout, 5000))));
        Json.emit(Json.obj("type", "done", "count", count, "stopped", stopped, "assignment", assignment,
                "generation", gm.generationId(), "member_id", gm.memberId()));
        return 0;
    }

    private long atMs() {
        return System.currentTimeMillis() - start;
    }

    private String loop(JsonObject a, int[] count) {
        Integer maxRecords = Json.integer(a, "max_records", null);
        Long idleMs = Json.lng(a, "idle_ms", null);
        long stopAfter = Json.lng(a, "stop_after_ms", 60_000L);
        long pollMs = Json.lng(a, "poll_ms", 100L);
        Path stopFile = Json.has(a, "stop_file") ? Path.of(Json.str(a, "stop_file", null)) : null;
        Path stallFile = Json.has(a, "stall_file") ? Path.of(Json.str(a, "stall_file", null)) : null;

        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                Json.emit(Json.obj("type", "revoked", "partitions", CtpOps.tps(partitions), "at_ms", atMs()));
                commitPending(partitions, "revoked");
                partitions.forEach(printedUpTo::remove);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                everAssigned = true;
                partitions.forEach(printedUpTo::remove);
                Json.emit(Json.obj("type", "assigned", "partitions", CtpOps.tps(partitions), "at_ms", atMs()));
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                Json.emit(Json.obj("type", "lost", "partitions", CtpOps.tps(partitions), "at_ms", atMs()));
                partitions.forEach(pending::remove);
                partitions.forEach(printedUpTo::remove);
            }
        };
        if (Json.has(a, "pattern")) {
            consumer.subscribe(Pattern.compile(Json.str(a, "pattern", null)), listener);
        } else if (Json.has(a, "subscription_pattern")) {
            consumer.subscribe(new SubscriptionPattern(Json.str(a, "subscription_pattern", null)), listener);
        } else {
            consumer.subscribe(KafkaHarness.topics(a), listener);
        }
        boolean stalled = false;
        long lastRecordAt = System.currentTimeMillis();
        while (true) {
            if (maxRecords != null && count[0] >= maxRecords) {
                return "max_records";
            }
            if (stopFile != null && Files.exists(stopFile)) {
                return "stop_file";
            }
            long now = System.currentTimeMillis();
            if (now - start >= stopAfter) {
                return "stop_after_ms";
            }
            if (stallFile != null && Files.exists(stallFile)) {
                if (!stalled) {
                    stalled = true;
                    Json.emit(Json.obj("type", "stalled", "at_ms", atMs()));
                }
                sleep(20);
                lastRecordAt = System.currentTimeMillis();
                continue;
            } else if (stalled) {
                stalled = false;
                Json.emit(Json.obj("type", "resumed", "at_ms", atMs()));
            }
            if (!everAssigned) {
                lastRecordAt = now;
            } else if (idleMs != null && now - lastRecordAt >= idleMs) {
                return "idle";
            }
            ConsumerRecords<byte[], byte[]> records;
            try {
                records = consumer.poll(Duration.ofMillis(max(1, min(pollMs, start + stopAfter - now))));
            } catch (IllegalStateException e) {
                if (!POSITION_RACE.equals(e.getMessage())) {
                    throw e;
                }
                // kafka-clients 4.3.0's KIP-848 consumer (AsyncKafkaConsumer) races itself here: the
                // application thread checked a partition fetchable, then its background thread moved it to
                // AWAIT_VALIDATION on a leader change, so FetchCollector's position update throws (upstream:
                // KAFKA-15529, KAFKA-19589). Nothing of this poll is handed out, but partitions collected
                // before the failing one in the same poll have already moved their positions past records
                // nobody saw: rewind every partition to what this member printed, then poll again.
                int rewound = rewindAfterRace(e);
                Json.emit(Json.obj("type", "client_race", "error", e.getMessage(), "at_ms", atMs(),
                        "rewound", rewound));
                continue;
            }
            for (ConsumerRecord<byte[], byte[]> r : records) {
                if (maxRecords != null && count[0] >= maxRecords) {
                    // not printed, not committed: the group hands it to another member
                    break;
                }
                Json.emit(KafkaHarness.recordJson(r));
                count[0]++;
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                printedUpTo.put(tp, r.offset() + 1);
                pending.put(tp, new OffsetAndMetadata(r.offset() + 1));
                lastRecordAt = System.currentTimeMillis();
            }
            commitPending(null, "poll");
        }
    }

    /**
     * After the client's position race (see loop): seeks each assigned partition back to the offset after
     * its last printed record, or, where none was printed since its assignment, to its committed offset
     * (to the beginning when there is none and auto.offset.reset is earliest). Returns the partitions
     * sought; rethrows the race where a start position cannot be known.
     */
    private int rewindAfterRace(IllegalStateException race) {
        List<TopicPartition> unprinted = new ArrayList<>();
        int sought = 0;
        for (TopicPartition tp : consumer.assignment()) {
            Long next = printedUpTo.get(tp);
            if (next != null) {
                consumer.seek(tp, next);
                sought++;
            } else {
                unprinted.add(tp);
            }
        }
        if (unprinted.isEmpty()) {
            return sought;
        }
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(unprinted), timeout);
        List<TopicPartition> neverCommitted = new ArrayList<>();
        for (TopicPartition tp : unprinted) {
            OffsetAndMetadata om = committed.get(tp);
            if (om != null) {
                consumer.seek(tp, om);
                sought++;
            } else {
                neverCommitted.add(tp);
            }
        }
        if (!neverCommitted.isEmpty()) {
            if (!resetsToEarliest) {
                throw race;
            }
            consumer.seekToBeginning(neverCommitted);
            sought += neverCommitted.size();
        }
        return sought;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException(e);
        }
    }

    /** Commits the pending offsets (of {@code only} when given); a failure leaves them pending. */
    private void commitPending(Collection<TopicPartition> only, String where) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        pending.forEach((tp, om) -> {
            if (only == null || only.contains(tp)) {
                offsets.put(tp, om);
            }
        });
        if (offsets.isEmpty()) {
            return;
        }
        JsonArray list = CtpOps.offsets(offsets);
        try {
            consumer.commitSync(offsets, timeout);
            Set<TopicPartition> done = offsets.keySet();
            done.forEach(tp -> {
                if (pending.get(tp) == offsets.get(tp)) {
                    pending.remove(tp);
                }
            });
            Json.emit(Json.obj("type", "committed", "offsets", list, "where", where, "at_ms", atMs()));
        } catch (KafkaException e) {
            Json.emit(Json.withError(Json.obj("type", "commit_error", "offsets", list, "where", where,
                    "at_ms", atMs()), e));
        }
    }
}
