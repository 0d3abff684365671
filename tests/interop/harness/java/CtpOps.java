import static java.lang.Math.max;
import static java.lang.Math.min;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The {@code ctp} command: an exactly-once consume-transform-produce loop, as a Kafka Streams-less
 * EOS application writes it, in one JVM. A KafkaConsumer (subscribe, group.id, read_committed, no
 * auto commit) and a transactional KafkaProducer; per poll: beginTransaction, one transformed record
 * per input record (value upper-cased, same key and partition), sendOffsetsToTransaction(consumed
 * offsets + 1, consumer.groupMetadata()), then commitTransaction, or abortTransaction every
 * {@code abort_every}-th transaction followed by a rewind of the consumer to the group's committed
 * offsets so the aborted input is processed again.
 *
 * <pre>
 * ctp {input_topic, output_topic, group_id, transactional_id,
 *      abort_every?=0         abort transactions number abort_every-1, 2*abort_every-1, ... (0: never)
 *      max_records?           stop once this many output records are committed
 *      idle_ms?=10000         stop when no record came for this long
 *      run_ms?=45000          stop after this long whatever happens
 *      poll_ms?=200, same_partition?=true (output partition = input partition; false: the partitioner)
 *      tag?                   header "ctp" = tag on every output record (tells instances apart)
 *      stall?: {txn, ms, until_file?}   before committing/aborting transaction txn, pause for ms (or
 *                             until until_file exists, ms at most): a zombie's GC pause
 *      config?, consumer_config?, producer_config?   client configs (config goes to both)}
 * -> started {group_id, transactional_id}; assigned|revoked|lost {partitions};
 *    committed|aborted {txn, records, offsets: [{topic,partition,offset}], outputs: [{partition,offset,
 *      input_partition,input_offset,value,value_b64}],
 *      generation, member_id}; rewound {positions}; stalled {txn, ms}; resumed {txn};
 *    fenced {txn, stage, error, ...} (ProducerFencedException / InvalidProducerEpochException: stops);
 *    txn_error {txn, stage, fatal, error, ...};
 *    done {stopped: max_records|idle|run_ms|fenced|fatal, transactions, committed_txns, aborted_txns,
 *          committed_records}
 * </pre>
 */
final class CtpOps {
    private CtpOps() {}

    /** A copy of the arguments whose "config" is config + extra (extra wins). */
    static JsonObject withConfig(JsonObject a, String extraKey) {
        JsonObject copy = a.deepCopy();
        JsonObject merged = new JsonObject();
        JsonObject base = Json.object(a, "config");
        if (base != null) {
            base.entrySet().forEach(e -> merged.add(e.getKey(), e.getValue()));
        }
        JsonObject extra = Json.object(a, extraKey);
        if (extra != null) {
            extra.entrySet().forEach(e -> merged.add(e.getKey(), e.getValue()));
        }
        copy.add("config", merged);
        return copy;
    }

    static JsonArray tps(Collection<TopicPartition> tps) {
        JsonArray out = new JsonArray();
        for (TopicPartition tp : KafkaHarness.sorted(Set.copyOf(tps))) {
            out.add(Json.obj("topic", tp.topic(), "partition", tp.partition()));
        }
        return out;
    }

    static JsonArray offsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
        JsonArray out = new JsonArray();
        for (TopicPartition tp : KafkaHarness.sorted(offsets.keySet())) {
            out.add(KafkaHarness.tpJson(tp, "offset", offsets.get(tp).offset()));
        }
        return out;
    }

    static boolean isFenced(Throwable t) {
        return t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException;
    }

    static boolean isFatal(Throwable t) {
        return isFenced(t) || t instanceof OutOfOrderSequenceException || t instanceof AuthorizationException
                || t instanceof UnsupportedVersionException;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static int run(JsonObject a) {
        long timeout = KafkaHarness.timeoutMs(a);
        String input = Json.requireStr(a, "input_topic");
        String output = Json.requireStr(a, "output_topic");
        String groupId = Json.requireStr(a, "group_id");
        String txnId = Json.requireStr(a, "transactional_id");
        int abortEvery = Json.integer(a, "abort_every", 0);
        Integer maxRecords = Json.integer(a, "max_records", null);
        long idleMs = Json.lng(a, "idle_ms", 10_000L);
        long runMs = Json.lng(a, "run_ms", 45_000L);
        long pollMs = Json.lng(a, "poll_ms", 200L);
        boolean samePartition = Json.bool(a, "same_partition", true);
        byte[] tag = Json.has(a, "tag") ? Json.str(a, "tag", null).getBytes(StandardCharsets.UTF_8) : null;
        JsonObject stall = Json.object(a, "stall");
        int stallTxn = stall == null ? -1 : Json.integer(stall, "txn", 0);
        long stallMs = stall == null ? 0 : Json.lng(stall, "ms", 0L);
        Path stallUntil = stall != null && Json.has(stall, "until_file") ? Path.of(Json.str(stall, "until_file", null))
                : null;

        Properties cp = KafkaHarness.consumerProps(withConfig(a, "consumer_config"), timeout);
        cp.put("group.id", groupId);
        cp.put("enable.auto.commit", "false");
        cp.putIfAbsent("isolation.level", "read_committed");
        Properties pp = KafkaHarness.producerProps(withConfig(a, "producer_config"), timeout);
        pp.put("transactional.id", txnId);
        Duration opTimeout = Duration.ofMillis(timeout);
        Duration closeTimeout = Duration.ofMillis(min(timeout, 5000));

        int txn = 0;
        int committedTxns = 0;
        int abortedTxns = 0;
        int committedRecords = 0;
        String stopped = "run_ms";
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp);
        try {
            producer.initTransactions();
            Json.emit(Json.obj("type", "started", "group_id", groupId, "transactional_id", txnId));
            consumer.subscribe(List.of(input), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    Json.emit(Json.obj("type", "revoked", "partitions", tps(partitions)));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    Json.emit(Json.obj("type", "assigned", "partitions", tps(partitions)));
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    Json.emit(Json.obj("type", "lost", "partitions", tps(partitions)));
                }
            });
            long start = System.currentTimeMillis();
            long lastRecordAt = start;
            while (true) {
                if (maxRecords != null && committedRecords >= maxRecords) {
                    stopped = "max_records";
                    break;
                }
                long now = System.currentTimeMillis();
                if (now - start >= runMs) {
                    stopped = "run_ms";
                    break;
                }
                if (now - lastRecordAt >= idleMs) {
                    stopped = "idle";
                    break;
                }
                ConsumerRecords<byte[], byte[]> records =
                        consumer.poll(Duration.ofMillis(max(1, min(pollMs, start + runMs - now))));
                if (records.isEmpty()) {
                    continue;
                }
                lastRecordAt = System.currentTimeMillis();
                boolean abort = abortEvery > 0 && (txn + 1) % abortEvery == 0;
                String stage = "begin";
                Map<TopicPartition, OffsetAndMetadata> next = new LinkedHashMap<>();
                JsonArray outputs = new JsonArray();
                ConsumerGroupMetadata group = null;
                try {
                    producer.beginTransaction();
                    stage = "send";
                    List<Future<RecordMetadata>> futures = new ArrayList<>();
                    List<byte[]> values = new ArrayList<>();
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        byte[] value = r.value() == null ? null
                                : new String(r.value(), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT)
                                        .getBytes(StandardCharsets.UTF_8);
                        values.add(value);
                        RecordHeaders headers = new RecordHeaders();
                        if (tag != null) {
                            headers.add(new RecordHeader("ctp", tag));
                        }
                        futures.add(producer.send(new ProducerRecord<>(output, samePartition ? r.partition() : null,
                                null, r.key(), value, headers)));
                        next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    }
                    producer.flush();
                    int i = 0;
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        RecordMetadata m = futures.get(i++).get(timeout, TimeUnit.MILLISECONDS);
                        JsonObject o = Json.obj("partition", m.partition(), "offset", m.offset(),
                                "input_partition", r.partition(), "input_offset", r.offset());
                        Json.putBytes(o, "value", values.get(i - 1));
                        outputs.add(o);
                    }
                    stage = "send_offsets";
                    group = consumer.groupMetadata();
                    producer.sendOffsetsToTransaction(next, group);
                    if (txn == stallTxn && stallMs > 0) {
                        Json.emit(Json.obj("type", "stalled", "txn", txn, "ms", stallMs));
                        long wakeAt = System.currentTimeMillis() + stallMs;
                        while (System.currentTimeMillis() < wakeAt && (stallUntil == null || !Files.exists(stallUntil))) {
                            sleep(min(50, max(1, wakeAt - System.currentTimeMillis())));
                        }
                        Json.emit(Json.obj("type", "resumed", "txn", txn));
                    }
                    stage = abort ? "abort" : "commit";
                    if (abort) {
                        producer.abortTransaction();
                    } else {
                        producer.commitTransaction();
                    }
                } catch (KafkaException | java.util.concurrent.ExecutionException
                         | java.util.concurrent.TimeoutException e) {
                    Throwable c = Json.unwrap(e);
                    if (isFatal(c)) {
                        Json.emit(Json.withError(Json.obj("type", isFenced(c) ? "fenced" : "txn_error", "txn", txn,
                                "stage", stage, "fatal", true), c));
                        stopped = isFenced(c) ? "fenced" : "fatal";
                        break;
                    }
                    // abortable (e.g. CommitFailedException: the group moved on): abort, then rewind
                    Json.emit(Json.withError(Json.obj("type", "txn_error", "txn", txn, "stage", stage,
                            "fatal", false), c));
                    abort = true;
                    try {
                        producer.abortTransaction();
                    } catch (KafkaException e2) {
                        Json.emit(Json.withError(Json.obj("type", isFenced(e2) ? "fenced" : "txn_error", "txn", txn,
                                "stage", "abort", "fatal", true), e2));
                        stopped = isFenced(e2) ? "fenced" : "fatal";
                        break;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
                Json.emit(Json.obj("type", abort ? "aborted" : "committed", "txn", txn, "records", records.count(),
                        "offsets", offsets(next), "outputs", outputs,
                        "generation", group == null ? null : group.generationId(),
                        "member_id", group == null ? null : group.memberId()));
                txn++;
                if (abort) {
                    abortedTxns++;
                    rewind(consumer, opTimeout);
                } else {
                    committedTxns++;
                    committedRecords += records.count();
                }
            }
        } finally {
            try {
                consumer.close(CloseOptions.timeout(closeTimeout));
            } finally {
                // a fenced producer's close must not wait for anything
                producer.close(stopped.equals("fenced") ? Duration.ZERO : closeTimeout);
            }
        }
        Json.emit(Json.obj("type", "done", "stopped", stopped, "transactions", txn, "committed_txns", committedTxns,
                "aborted_txns", abortedTxns, "committed_records", committedRecords));
        return 0;
    }

    /** After an abort: every assigned partition back to the group's committed offset (the beginning if none). */
    static void rewind(KafkaConsumer<byte[], byte[]> consumer, Duration timeout) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned, timeout);
        List<TopicPartition> none = new ArrayList<>();
        JsonArray positions = new JsonArray();
        for (TopicPartition tp : KafkaHarness.sorted(assigned)) {
            OffsetAndMetadata om = committed.get(tp);
            if (om == null) {
                none.add(tp);
                positions.add(KafkaHarness.tpJson(tp, "offset", "beginning"));
            } else {
                consumer.seek(tp, om);
                positions.add(KafkaHarness.tpJson(tp, "offset", om.offset()));
            }
        }
        if (!none.isEmpty()) {
            consumer.seekToBeginning(none);
        }
        Json.emit(Json.obj("type", "rewound", "positions", positions));
    }
}
