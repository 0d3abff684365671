import static java.lang.Math.max;
import static java.lang.Math.min;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * A command-line driver for the real Java Kafka client (kafka-clients 4.3.0), used by the interop
 * tests: {@code java -cp <classes>:<jars> KafkaHarness <command> [<json> | - | @file]}.
 *
 * <p>Arguments are one JSON object (inline, "-" for stdin, "@path" for a file). Output is JSON
 * lines on stdout, each with a "type"; the client's own logs go to stderr. Exit codes: 0 the
 * command ran (per-record or per-operation errors are lines in the output), 1 a fatal error (a
 * "fatal" line says which), 2 bad usage, 3 the watchdog stopped a run that took too long.
 */
public final class KafkaHarness {
    private KafkaHarness() {}

    static final String HARNESS_VERSION = "1";
    static final long DEFAULT_TIMEOUT_MS = 20_000;
    static final long DEFAULT_DEADLINE_MS = 60_000;

    static final String USAGE = """
            usage: KafkaHarness <command> [<json-object> | - | @file]
            Prints JSON lines on stdout (client logs on stderr). Exit code 0: the command ran (failed
            records or operations are lines in the output); 1: fatal (see the "fatal" line);
            2: bad usage; 3: the watchdog ended a run that outlived deadline_ms.

            JSON arguments common to all commands (all optional but bootstrap):
              bootstrap     "host:port[,host:port]"  (bootstrap.servers)
              config        {"<client config>": value, ...}  passed through to the client
              timeout_ms    bound for each client operation (default 20000)
              deadline_ms   the whole run; a watchdog exits with code 3 after it (default 60000)
              log_level     client log level on stderr: OFF ERROR WARN INFO DEBUG TRACE (default WARN)

            Records (produce, txn, batch) are objects:
              {"topic"?, "partition"?, "timestamp"?, "key" | "key_b64", "value" | "value_b64",
               "headers": [{"key": "h", "value" | "value_b64": ...}]}   (missing/null = null)

            commands:
              version   {"type":"version","kafka_clients":"4.3.0",...}
              produce   {topic, records, sync?=false}
                        -> sent {index,topic,partition,offset,timestamp} | send_error {index,error,...};
                           done {sent,failed}
              consume   {topic | topics | pattern, partitions?, seek?="beginning", subscribe?=false,
                         max_records?, until_end?=false, idle_ms?, poll_ms?=100, commit?=false}
                        pattern: subscribe to the topics matching this regex (a group.id in config)
                        seek: "beginning" | "end" | "committed" | <offset> | {"timestamp": ms}
                              | {"<partition>": <offset> | "beginning" | "end", ...}
                        -> offset_for_time {...}; record {topic,partition,offset,timestamp,
                           timestamp_type,leader_epoch,key,key_b64,value,value_b64,headers};
                           committed {offsets}; done {count,stopped,assignment,positions,end_offsets}
              txn       {transactional_id?, transactions: [{records, end?="commit"|"abort"|"open",
                         send_offsets?: {group_id, offsets: [{topic,partition,offset}]}}]}
                        -> initialized; sent/send_error {txn,index,...}; committed|aborted|left_open
                           {txn} | txn_error {txn,stage,...}; done
              ctp       consume-transform-produce loop, exactly once (CtpOps.java: arguments there)
              group-consume  subscribe in a group, commit after each poll (GroupConsumeOps.java)
              share-consume  a share group member (KafkaShareConsumer; ShareConsumeOps.java)
              admin     {op, ...} or {ops: [{op, ...}, ...]}; one result|error line per op:
                        listTopics {internal?}; describeTopics {topics};
                        listOffsets {topic, partitions?, spec?="latest", isolation_level?}
                          spec: earliest | latest | max_timestamp | earliest_local | latest_tiered
                                | {"timestamp": ms};
                        createTopics {topics: [{name, partitions?, replication_factor?, configs?}],
                          validate_only?}; deleteTopics {topics}; describeCluster {};
                        describeConfigs {topics?, brokers?, client_metrics?, names?};
                        incrementalAlterConfigs {topic | broker | client_metrics, set?: {k: v}, delete?: [k]};
                        createPartitions {topic, count}; deleteRecords {topic, offsets: {"p": o}};
                        describeConsumerGroups {groups}; listConsumerGroupOffsets {group};
                        alterUserScramCredentials {upsert?: [{user, mechanism, password, iterations?}],
                          delete?: [{user, mechanism}]}; describeUserScramCredentials {users?};
                        electLeaders, alterPartitionReassignments, listPartitionReassignments,
                          describeLogDirs (ClusterAdminOps.java)
                        createAcls {acls}; describeAcls {filter?}; deleteAcls {filters} (AclOps.java)
              batch     {records, compression?="none", base_offset?, producer_id?, producer_epoch?,
                         base_sequence?, transactional?, timestamp_type?, partition_leader_epoch?}
                        builds a v2 RecordBatch with the client's own code, no broker:
                        -> batch {batch_b64,size_bytes}, then what decode prints
              decode    {batch_b64}  -> batch_info {...}, batch_record {...} per record
              codecs    {}  round-trips a batch through none/gzip/snappy/lz4/zstd
                        -> codec {codec, ok, size_bytes | error}
              avro-produce, avro-consume  Confluent's KafkaAvroSerializer / KafkaAvroDeserializer
                        through a Schema Registry (RegistryOps.java: arguments there)
            """;

    public static void main(String[] argv) {
        // Only Json.emit writes to the real stdout; anything a library prints goes to stderr.
        System.setOut(System.err);
        if (argv.length == 0 || argv[0].equals("-h") || argv[0].equals("--help") || argv[0].equals("help")) {
            Json.printText(USAGE);
            System.exit(argv.length == 0 ? 2 : 0);
        }
        String command = argv[0];
        JsonObject args;
        try {
            args = readArgs(argv);
        } catch (Exception e) {
            Json.emit(Json.withError(Json.obj("type", "fatal", "command", command, "stage", "arguments"), e));
            System.exit(2);
            return;
        }
        // Read by log4j2.properties; must be set before the first Kafka class creates a logger.
        System.setProperty("harness.log.level", Json.str(args, "log_level", "WARN"));
        startWatchdog(command, Json.lng(args, "deadline_ms", DEFAULT_DEADLINE_MS));

        int rc;
        try {
            rc = switch (command) {
                case "version" -> version();
                case "produce" -> produce(args);
                case "consume" -> consume(args);
                case "txn" -> txn(args);
                case "ctp" -> CtpOps.run(args);
                case "group-consume" -> GroupConsumeOps.run(args);
                case "share-consume" -> ShareConsumeOps.run(args);
                case "admin" -> AdminOps.run(args);
                case "batch" -> RecordsOps.batch(args);
                case "decode" -> RecordsOps.decode(args);
                case "codecs" -> RecordsOps.codecs(args);
                case "avro-produce" -> RegistryOps.produce(args);
                case "avro-consume" -> RegistryOps.consume(args);
                default -> {
                    Json.emit(Json.obj("type", "fatal", "command", command, "error", "UsageError",
                            "message", "unknown command " + command + "; try --help"));
                    yield 2;
                }
            };
        } catch (Throwable t) {
            Json.emit(Json.withError(Json.obj("type", "fatal", "command", command), t));
            t.printStackTrace(System.err);
            rc = 1;
        }
        // exit even if a client left a non-daemon thread behind
        System.exit(rc);
    }

    static JsonObject readArgs(String[] argv) throws IOException {
        if (argv.length < 2) {
            return new JsonObject();
        }
        if (argv.length > 2) {
            throw new IllegalArgumentException("expected one JSON argument, got " + (argv.length - 1));
        }
        String a = argv[1];
        String text;
        if (a.equals("-")) {
            InputStream in = System.in;
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } else if (a.startsWith("@")) {
            text = Files.readString(Path.of(a.substring(1)), StandardCharsets.UTF_8);
        } else {
            text = a;
        }
        return Json.parseObject(text);
    }

    static void startWatchdog(String command, long deadlineMs) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(deadlineMs);
            } catch (InterruptedException e) {
                return;
            }
            Json.emit(Json.obj("type", "fatal", "command", command, "error", "Watchdog",
                    "message", "the run took longer than deadline_ms=" + deadlineMs + "; exiting"));
            Runtime.getRuntime().halt(3);
        }, "harness-watchdog");
        t.setDaemon(true);
        t.start();
    }

    // ------------------------------------------------------------------ common

    static long timeoutMs(JsonObject a) {
        return Json.lng(a, "timeout_ms", DEFAULT_TIMEOUT_MS);
    }

    /** bootstrap.servers from "bootstrap", then everything in "config" (which wins). */
    static Properties clientProps(JsonObject a) {
        Properties p = new Properties();
        if (Json.has(a, "bootstrap")) {
            p.put("bootstrap.servers", Json.str(a, "bootstrap", null));
        }
        JsonObject config = Json.object(a, "config");
        if (config != null) {
            for (Map.Entry<String, JsonElement> e : config.entrySet()) {
                if (!e.getValue().isJsonNull()) {
                    p.put(e.getKey(), Json.configValue(e.getValue()));
                }
            }
        }
        if (!p.containsKey("bootstrap.servers")) {
            throw new IllegalArgumentException("missing argument: bootstrap");
        }
        return p;
    }

    /** Producer configs; timeouts derived from timeout_ms unless given, so nothing waits forever. */
    static Properties producerProps(JsonObject a, long timeout) {
        Properties p = clientProps(a);
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        long request = Long.parseLong((String) p.computeIfAbsent("request.timeout.ms",
                k -> Long.toString(max(1000, timeout / 2))));
        long linger = Long.parseLong((String) p.getOrDefault("linger.ms", "5"));
        p.putIfAbsent("max.block.ms", Long.toString(timeout));
        p.putIfAbsent("delivery.timeout.ms", Long.toString(max(timeout, linger + request)));
        return p;
    }

    static Properties consumerProps(JsonObject a, long timeout) {
        Properties p = clientProps(a);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.putIfAbsent("enable.auto.commit", "false");
        p.putIfAbsent("auto.offset.reset", "earliest");
        p.putIfAbsent("default.api.timeout.ms", Long.toString(timeout));
        p.putIfAbsent("request.timeout.ms", Long.toString(max(1000, timeout)));
        return p;
    }

    static ProducerRecord<byte[], byte[]> toRecord(JsonObject r, String defaultTopic) {
        String topic = Json.str(r, "topic", defaultTopic);
        if (topic == null) {
            throw new IllegalArgumentException("record without a topic and no default topic: " + r);
        }
        RecordHeaders headers = new RecordHeaders();
        JsonArray hs = Json.arr(r, "headers");
        if (hs != null) {
            for (JsonElement h : hs) {
                JsonObject ho = h.getAsJsonObject();
                headers.add(new RecordHeader(Json.requireStr(ho, "key"), Json.bytes(ho, "value")));
            }
        }
        return new ProducerRecord<>(topic, Json.integer(r, "partition", null), Json.lng(r, "timestamp", null),
                Json.bytes(r, "key"), Json.bytes(r, "value"), headers);
    }

    static JsonArray requireRecords(JsonObject a) {
        JsonArray records = Json.arr(a, "records");
        if (records == null) {
            throw new IllegalArgumentException("missing argument: records");
        }
        return records;
    }

    static JsonObject tpJson(TopicPartition tp, String key, Object value) {
        return Json.obj("topic", tp.topic(), "partition", tp.partition(), key, value);
    }

    // ------------------------------------------------------------------ version

    static int version() {
        Json.emit(Json.obj("type", "version", "kafka_clients", AppInfoParser.getVersion(),
                "commit", AppInfoParser.getCommitId(), "java", System.getProperty("java.version"),
                "harness", HARNESS_VERSION));
        return 0;
    }

    // ------------------------------------------------------------------ produce

    /** Sends one record; a synchronous failure becomes a failed "future" so reporting is uniform. */
    static Future<RecordMetadata> send(KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> rec) {
        try {
            return producer.send(rec);
        } catch (KafkaException | IllegalStateException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /** Waits for one send and prints sent / send_error; returns whether it succeeded. */
    static boolean report(Future<RecordMetadata> f, long timeout, Object... extra) {
        JsonObject line;
        boolean ok;
        try {
            RecordMetadata m = f.get(timeout, TimeUnit.MILLISECONDS);
            line = Json.obj("type", "sent", "topic", m.topic(), "partition", m.partition(),
                    "offset", m.hasOffset() ? m.offset() : null,
                    "timestamp", m.hasTimestamp() ? m.timestamp() : null);
            ok = true;
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            line = Json.withError(Json.obj("type", "send_error"), e);
            ok = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < extra.length; i += 2) {
            line.add((String) extra[i], Json.of(extra[i + 1]));
        }
        Json.emit(line);
        return ok;
    }

    static int produce(JsonObject a) {
        long timeout = timeoutMs(a);
        String topic = Json.str(a, "topic", null);
        JsonArray records = requireRecords(a);
        boolean sync = Json.bool(a, "sync", false);
        int sent = 0;
        int failed = 0;
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(a, timeout));
        try {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < records.size(); i++) {
                Future<RecordMetadata> f = send(producer, toRecord(records.get(i).getAsJsonObject(), topic));
                if (sync) {
                    if (report(f, timeout, "index", i)) {
                        sent++;
                    } else {
                        failed++;
                    }
                } else {
                    futures.add(f);
                }
            }
            if (!sync) {
                producer.flush();
                for (int i = 0; i < futures.size(); i++) {
                    if (report(futures.get(i), timeout, "index", i)) {
                        sent++;
                    } else {
                        failed++;
                    }
                }
            }
            emitMetrics(producer.metrics(), Json.arr(a, "metrics"));
        } finally {
            producer.close(Duration.ofMillis(min(timeout, 5000)));
        }
        Json.emit(Json.obj("type", "done", "sent", sent, "failed", failed));
        return 0;
    }

    /** One "metrics" line with the named client metrics (their group-level values, e.g.
     * produce-throttle-time-max of producer-metrics), when the arguments name some. */
    static void emitMetrics(java.util.Map<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> metrics,
                            JsonArray names) {
        if (names == null) {
            return;
        }
        JsonObject values = new JsonObject();
        for (var e : metrics.entrySet()) {
            for (var n : names) {
                if (e.getKey().name().equals(n.getAsString()) && e.getKey().tags().size() == 1) {
                    Object v = e.getValue().metricValue();
                    if (v instanceof Number num) {
                        values.addProperty(n.getAsString(), num.doubleValue());
                    }
                }
            }
        }
        Json.emit(Json.obj("type", "metrics", "values", values));
    }

    // ------------------------------------------------------------------ txn

    @SuppressWarnings("removal") // ConsumerGroupMetadata(String): fine for a harness pinned to 4.3.0
    static int txn(JsonObject a) {
        long timeout = timeoutMs(a);
        String topic = Json.str(a, "topic", null);
        Properties props = producerProps(a, timeout);
        if (Json.has(a, "transactional_id")) {
            props.put("transactional.id", Json.str(a, "transactional_id", null));
        }
        if (!props.containsKey("transactional.id")) {
            throw new IllegalArgumentException("missing argument: transactional_id (or config transactional.id)");
        }
        JsonArray txns = Json.arr(a, "transactions");
        if (txns == null) {
            throw new IllegalArgumentException("missing argument: transactions");
        }
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        Duration closeTimeout = Duration.ofMillis(min(timeout, 5000));
        try {
            producer.initTransactions();
            Json.emit(Json.obj("type", "initialized", "transactional_id", props.get("transactional.id")));
            for (int t = 0; t < txns.size(); t++) {
                JsonObject tx = txns.get(t).getAsJsonObject();
                String end = Json.str(tx, "end", "commit");
                String stage = "begin";
                try {
                    producer.beginTransaction();
                    stage = "send";
                    JsonArray records = Json.arr(tx, "records");
                    List<Future<RecordMetadata>> futures = new ArrayList<>();
                    if (records != null) {
                        for (JsonElement r : records) {
                            futures.add(send(producer, toRecord(r.getAsJsonObject(), topic)));
                        }
                    }
                    producer.flush();
                    for (int i = 0; i < futures.size(); i++) {
                        report(futures.get(i), timeout, "txn", t, "index", i);
                    }
                    JsonObject offsets = Json.object(tx, "send_offsets");
                    if (offsets != null) {
                        stage = "send_offsets";
                        Map<TopicPartition, OffsetAndMetadata> map = new LinkedHashMap<>();
                        for (JsonElement e : Json.arr(offsets, "offsets")) {
                            JsonObject o = e.getAsJsonObject();
                            map.put(new TopicPartition(Json.requireStr(o, "topic"), Json.integer(o, "partition", 0)),
                                    new OffsetAndMetadata(Json.lng(o, "offset", 0L)));
                        }
                        producer.sendOffsetsToTransaction(map,
                                new ConsumerGroupMetadata(Json.requireStr(offsets, "group_id")));
                    }
                    stage = end;
                    switch (end) {
                        case "commit" -> {
                            producer.commitTransaction();
                            Json.emit(Json.obj("type", "committed", "txn", t));
                        }
                        case "abort" -> {
                            producer.abortTransaction();
                            Json.emit(Json.obj("type", "aborted", "txn", t));
                        }
                        case "open" -> {
                            // Leave it open: close without waiting so the client does not abort it.
                            Json.emit(Json.obj("type", "left_open", "txn", t));
                            closeTimeout = Duration.ZERO;
                        }
                        default -> throw new IllegalArgumentException("end must be commit, abort or open: " + end);
                    }
                    if (end.equals("open")) {
                        break;
                    }
                } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException e) {
                    // fatal for this producer: report and stop
                    Json.emit(Json.withError(Json.obj("type", "txn_error", "txn", t, "stage", stage, "fatal", true), e));
                    break;
                } catch (KafkaException e) {
                    Json.emit(Json.withError(Json.obj("type", "txn_error", "txn", t, "stage", stage, "fatal", false), e));
                    try {
                        producer.abortTransaction();
                        Json.emit(Json.obj("type", "aborted", "txn", t));
                    } catch (KafkaException e2) {
                        Json.emit(Json.withError(Json.obj("type", "txn_error", "txn", t, "stage", "abort", "fatal", true), e2));
                        break;
                    }
                }
            }
        } finally {
            producer.close(closeTimeout);
        }
        Json.emit(Json.obj("type", "done"));
        return 0;
    }

    // ------------------------------------------------------------------ consume

    static List<String> topics(JsonObject a) {
        List<String> out = new ArrayList<>();
        JsonArray ts = Json.arr(a, "topics");
        if (ts != null) {
            ts.forEach(e -> out.add(e.getAsString()));
        } else if (Json.has(a, "topic")) {
            out.add(Json.str(a, "topic", null));
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("missing argument: topic (or topics)");
        }
        return out;
    }

    /** All partitions of a topic, waiting (up to the deadline) for it to exist. */
    static List<TopicPartition> partitionsOf(KafkaConsumer<byte[], byte[]> c, String topic, long timeout) {
        long deadline = System.currentTimeMillis() + timeout;
        while (true) {
            List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofMillis(timeout));
            if (infos != null && !infos.isEmpty()) {
                List<TopicPartition> out = new ArrayList<>();
                infos.forEach(pi -> out.add(new TopicPartition(topic, pi.partition())));
                out.sort((x, y) -> Integer.compare(x.partition(), y.partition()));
                return out;
            }
            if (System.currentTimeMillis() >= deadline) {
                throw new IllegalStateException("topic " + topic + " has no partitions after " + timeout + " ms");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    static boolean isPartitionMap(JsonElement seek) {
        return seek != null && seek.isJsonObject() && !seek.getAsJsonObject().has("timestamp");
    }

    static List<TopicPartition> assignmentFor(KafkaConsumer<byte[], byte[]> c, JsonObject a, List<String> topics,
                                              long timeout) {
        JsonArray parts = Json.arr(a, "partitions");
        JsonElement seek = a.get("seek");
        if (parts == null && isPartitionMap(seek)) {
            parts = new JsonArray();
            for (String k : seek.getAsJsonObject().keySet()) {
                parts.add(Integer.parseInt(k));
            }
        }
        List<TopicPartition> tps = new ArrayList<>();
        if (parts != null) {
            if (topics.size() != 1) {
                throw new IllegalArgumentException("partitions (or a partition seek map) needs exactly one topic");
            }
            parts.forEach(p -> tps.add(new TopicPartition(topics.get(0), p.getAsInt())));
        } else {
            for (String t : topics) {
                tps.addAll(partitionsOf(c, t, timeout));
            }
        }
        return tps;
    }

    static void seek(KafkaConsumer<byte[], byte[]> c, JsonElement seek, List<TopicPartition> tps, long timeout) {
        if (seek == null || seek.isJsonNull()) {
            seek = Json.of("beginning");
        }
        if (seek.isJsonPrimitive() && seek.getAsJsonPrimitive().isNumber()) {
            for (TopicPartition tp : tps) {
                c.seek(tp, seek.getAsLong());
            }
        } else if (seek.isJsonPrimitive()) {
            seekNamed(c, seek.getAsString(), tps);
        } else if (seek.isJsonObject() && seek.getAsJsonObject().has("timestamp")) {
            long ts = seek.getAsJsonObject().get("timestamp").getAsLong();
            Map<TopicPartition, Long> query = new LinkedHashMap<>();
            tps.forEach(tp -> query.put(tp, ts));
            Map<TopicPartition, OffsetAndTimestamp> found = c.offsetsForTimes(query, Duration.ofMillis(timeout));
            for (TopicPartition tp : tps) {
                OffsetAndTimestamp ot = found.get(tp);
                Json.emit(Json.obj("type", "offset_for_time", "topic", tp.topic(), "partition", tp.partition(),
                        "query", ts, "offset", ot == null ? null : ot.offset(),
                        "timestamp", ot == null ? null : ot.timestamp(),
                        "leader_epoch", ot == null ? null : ot.leaderEpoch()));
                if (ot == null) {
                    c.seekToEnd(List.of(tp));
                } else {
                    c.seek(tp, ot.offset());
                }
            }
        } else if (seek.isJsonObject()) {
            for (TopicPartition tp : tps) {
                JsonElement v = seek.getAsJsonObject().get(Integer.toString(tp.partition()));
                if (v == null || v.isJsonNull()) {
                    continue;
                }
                if (v.getAsJsonPrimitive().isNumber()) {
                    c.seek(tp, v.getAsLong());
                } else {
                    seekNamed(c, v.getAsString(), List.of(tp));
                }
            }
        } else {
            throw new IllegalArgumentException("bad seek: " + seek);
        }
    }

    static void seekNamed(KafkaConsumer<byte[], byte[]> c, String how, List<TopicPartition> tps) {
        switch (how) {
            case "beginning" -> c.seekToBeginning(tps);
            case "end" -> c.seekToEnd(tps);
            case "committed", "none" -> { }
            default -> throw new IllegalArgumentException("seek must be beginning, end, committed, an offset, "
                    + "{\"timestamp\": ms} or {\"<partition>\": offset}: " + how);
        }
    }

    static JsonObject recordJson(ConsumerRecord<byte[], byte[]> r) {
        JsonObject o = Json.obj("type", "record", "topic", r.topic(), "partition", r.partition(),
                "offset", r.offset(), "timestamp", r.timestamp(), "timestamp_type", r.timestampType().name,
                "leader_epoch", r.leaderEpoch());
        Json.putBytes(o, "key", r.key());
        Json.putBytes(o, "value", r.value());
        o.add("headers", Json.headers(r.headers()));
        return o;
    }

    static int consume(JsonObject a) {
        long timeout = timeoutMs(a);
        long pollMs = Json.lng(a, "poll_ms", 100L);
        Integer maxRecords = Json.integer(a, "max_records", null);
        boolean untilEnd = Json.bool(a, "until_end", false);
        Long idleMs = Json.lng(a, "idle_ms", null);
        boolean commit = Json.bool(a, "commit", false);
        boolean subscribe = Json.bool(a, "subscribe", false);
        String pattern = Json.str(a, "pattern", null);
        List<String> topics = pattern != null ? List.of() : topics(a);

        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps(a, timeout));
        try {
            if (pattern != null) {
                c.subscribe(java.util.regex.Pattern.compile(pattern));
            } else if (subscribe) {
                c.subscribe(topics);
            } else {
                List<TopicPartition> tps = assignmentFor(c, a, topics, timeout);
                c.assign(tps);
                seek(c, a.get("seek"), tps, timeout);
            }
            long start = System.currentTimeMillis();
            long deadline = start + timeout;
            long lastRecordAt = start;
            Map<TopicPartition, Long> ends = null;
            Set<TopicPartition> endsFor = null;
            Map<TopicPartition, Long> next = new LinkedHashMap<>();
            String stopped = "timeout";
            int count = 0;
            while (true) {
                if (maxRecords != null && count >= maxRecords) {
                    stopped = "max_records";
                    break;
                }
                if (untilEnd) {
                    Set<TopicPartition> assigned = c.assignment();
                    if (!assigned.isEmpty()) {
                        if (!assigned.equals(endsFor)) {
                            ends = c.endOffsets(assigned, Duration.ofMillis(timeout));
                            endsFor = new HashSet<>(assigned);
                        }
                        if (reachedEnd(c, ends, timeout)) {
                            stopped = "end";
                            break;
                        }
                    }
                }
                long now = System.currentTimeMillis();
                if (now >= deadline) {
                    break;
                }
                if (idleMs != null && now - lastRecordAt >= idleMs) {
                    stopped = "idle";
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(max(1, min(pollMs, deadline - now))));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    if (maxRecords != null && count >= maxRecords) {
                        break;
                    }
                    Json.emit(recordJson(r));
                    count++;
                    next.put(new TopicPartition(r.topic(), r.partition()), r.offset() + 1);
                    lastRecordAt = System.currentTimeMillis();
                }
            }
            if (commit && !next.isEmpty()) {
                Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                next.forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o)));
                JsonArray list = new JsonArray();
                next.forEach((tp, o) -> list.add(tpJson(tp, "offset", o)));
                try {
                    c.commitSync(offsets, Duration.ofMillis(timeout));
                    Json.emit(Json.obj("type", "committed", "offsets", list));
                } catch (KafkaException e) {
                    Json.emit(Json.withError(Json.obj("type", "commit_error", "offsets", list), e));
                }
            }
            JsonArray assignment = new JsonArray();
            JsonArray positions = new JsonArray();
            for (TopicPartition tp : sorted(c.assignment())) {
                assignment.add(tpJson(tp, "offset", null));
                Long pos;
                try {
                    pos = c.position(tp, Duration.ofMillis(min(timeout, 5000)));
                } catch (KafkaException e) {
                    pos = null;
                }
                positions.add(tpJson(tp, "offset", pos));
            }
            assignment.forEach(e -> e.getAsJsonObject().remove("offset"));
            JsonArray endList = null;
            if (ends != null) {
                endList = new JsonArray();
                for (TopicPartition tp : sorted(ends.keySet())) {
                    endList.add(tpJson(tp, "offset", ends.get(tp)));
                }
            }
            Json.emit(Json.obj("type", "done", "count", count, "stopped", stopped, "assignment", assignment,
                    "positions", positions, "end_offsets", endList));
        } finally {
            c.close(CloseOptions.timeout(Duration.ofMillis(min(timeout, 5000))));
        }
        return 0;
    }

    static List<TopicPartition> sorted(Set<TopicPartition> tps) {
        List<TopicPartition> out = new ArrayList<>(tps);
        out.sort((x, y) -> x.topic().equals(y.topic())
                ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
        return out;
    }

    static boolean reachedEnd(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> ends, long timeout) {
        Map<TopicPartition, Long> positions = new HashMap<>();
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            long pos = c.position(e.getKey(), Duration.ofMillis(timeout));
            positions.put(e.getKey(), pos);
            if (pos < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
