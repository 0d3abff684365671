import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.ListIterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Kafka client calls that Spark 4.x's Kafka connector (spark-sql-kafka-0-10) makes, with the
 * configs it sets, driven by the same options a PySpark user passes to
 * {@code spark.read/readStream.format("kafka")} and {@code df.write/writeStream.format("kafka")}.
 * It stands in for Spark where the connector jars cannot be had (CI), so the behaviour Spark relies
 * on is pinned against mockbroker with kafka-clients 4.3.0 alone.
 *
 * <p>Written from reading the connector's sources for behaviour (KafkaSourceProvider,
 * KafkaOffsetReaderAdmin, ConsumerStrategy, KafkaMicroBatchStream, KafkaRelation/KafkaSourceRDD,
 * KafkaBatchPartitionReader, KafkaDataConsumer/InternalKafkaConsumer/FetchedData,
 * KafkaOffsetRangeCalculator, KafkaRecordToRowConverter, KafkaWriteTask and the producer pool):
 * <ul>
 *   <li>driver: one Admin per query built from the "kafka."-options plus Spark's driver consumer
 *       configs; describeTopics (subscribe, assign) or listTopics + regex find (subscribePattern);
 *       listOffsets earliest / latest / forTimestamp with ListOffsetsOptions(isolation.level);
 *       three attempts with a fresh Admin between them; the "latest went backwards" audit;</li>
 *   <li>executors: one KafkaConsumer per topic-partition, assign() only (never a group join),
 *       auto.offset.reset=none, group.id {prefix}-{uuid}[-{checkpoint hash}]-executor, seek + poll
 *       per fetch, seekToBeginning/seekToEnd + position for the available range, and Spark's
 *       handling of offset gaps (compaction, transaction markers, aborted records) and of
 *       out-of-range offsets (failOnDataLoss);</li>
 *   <li>sink: one cached KafkaProducer per config (ByteArraySerializer, the "kafka."-options and
 *       nothing else: Kafka's defaults, so idempotent, acks=all), send with a callback keeping the
 *       first failure, flush at the end of the task.</li>
 * </ul>
 *
 * <p>Usage: {@code java -cp <classes>:<jars> SparkCalls serve [LOG_LEVEL]} reads one JSON request
 * per line on stdin and answers each with JSON lines ending in
 * {@code {"type":"end","id":..,"ok":true|false,...}}; {@code SparkCalls <op> <json>|-} runs one.
 * Requests: {@code {"id", "op", "deadline_ms"?, ...}}; ops:
 * <pre>
 *   batch_read      {options}                      spark.read ... .load() collected
 *                   -> configs, plan {ranges}, row*, range_read*, done {rows}
 *   stream_start    {stream, options, checkpoint?} spark.readStream ... start(): initial offsets
 *                   -> configs, initial_offsets {offsets}
 *   stream_trigger  {stream, available_now?}       one trigger of MicroBatchExecution
 *                   -> no_batch | (row*, range_read*, batch {batch_id,start,end,rows})
 *   stream_available_now {stream}                  Trigger.AvailableNow: batches until caught up
 *   stream_stop     {stream}
 *   write           {options, rows}                df.write.format("kafka"): rows {topic?, key?,
 *                                                  value, headers?, partition?, timestamp?}
 *                   -> written {rows}
 *   close_producers {}                             empties the sink's producer cache
 *   produce / txn / admin                          KafkaHarness's commands (test set-up, same JVM)
 *   txn_open {bootstrap, transactional_id, topic?, records}   a transaction left open
 *   txn_finish {transactional_id, end?="commit"|"abort"}       and its end
 *   produce_background {bootstrap, topic, count, pause_ms?}  a producer thread writing "v0".."vN"
 *   join_background {}                             -> background_done {sent, errors}
 * </pre>
 * Rows carry topic, partition, offset, timestamp, timestampType (0 create, 1 log append),
 * key/value (text and _b64) and, with includeHeaders, headers (null when a record has none, as
 * Spark's row converter does). Spark's errors come back on the end line with "condition" (e.g.
 * KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE) when Spark raises one with an error condition.
 */
public final class SparkCalls {
    // KafkaOffsetRangeLimit's markers for "resolve later" and KafkaDataConsumer's unknown offset.
    static final long EARLIEST = -2L;
    static final long LATEST = -1L;
    static final long UNKNOWN_OFFSET = -2L;
    // spark.network.timeout (120s): the default of kafkaConsumer.pollTimeoutMs.
    static final long DEFAULT_POLL_TIMEOUT_MS = 120_000L;

    private final Map<String, Stream> streams = new HashMap<>();
    private final Map<String, KafkaProducer<byte[], byte[]>> producers = new HashMap<>();
    private final Map<String, KafkaProducer<byte[], byte[]>> openTxns = new HashMap<>();
    private Thread background;
    private final long[] backgroundResult = new long[2];

    // ------------------------------------------------------------------ entry points

    public static void main(String[] argv) {
        System.setOut(System.err);
        if (argv.length == 0 || argv[0].equals("--help") || argv[0].equals("-h")) {
            Json.printText("usage: SparkCalls serve [LOG_LEVEL] | SparkCalls <op> <json>|-  (see the class comment)\n");
            System.exit(argv.length == 0 ? 2 : 0);
        }
        boolean serve = argv[0].equals("serve");
        String level = serve && argv.length > 1 ? argv[1] : "WARN";
        JsonObject single = null;
        if (!serve) {
            try {
                single = KafkaHarness.readArgs(argv);
                level = Json.str(single, "log_level", level);
            } catch (Exception e) {
                Json.emit(Json.withError(Json.obj("type", "fatal", "op", argv[0], "stage", "arguments"), e));
                System.exit(2);
            }
        }
        System.setProperty("harness.log.level", level);
        Watchdog watchdog = new Watchdog();
        SparkCalls calls = new SparkCalls();
        int rc = 0;
        try {
            if (serve) {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    if (!line.isBlank()) {
                        calls.handle(line, watchdog);
                    }
                }
            } else {
                single.addProperty("op", argv[0]);
                rc = calls.handle(single.toString(), watchdog) ? 0 : 1;
            }
        } catch (Throwable t) {
            Json.emit(Json.withError(Json.obj("type", "fatal"), t));
            rc = 1;
        } finally {
            calls.closeAll();
        }
        System.exit(rc);
    }

    /** Runs one request and prints its end line; returns whether it succeeded. */
    boolean handle(String text, Watchdog watchdog) {
        JsonObject req;
        try {
            req = JsonParser.parseString(text).getAsJsonObject();
        } catch (RuntimeException e) {
            Json.emit(Json.withError(Json.obj("type", "end", "id", null, "ok", false, "stage", "arguments"), e));
            return false;
        }
        String op = Json.str(req, "op", "?");
        JsonObject end = Json.obj("type", "end", "id", req.get("id"), "op", op);
        watchdog.arm(op, Json.lng(req, "deadline_ms", 120_000L));
        try {
            dispatch(op, req);
            end.addProperty("ok", true);
        } catch (Throwable t) {
            Json.withError(end, t);
            end.addProperty("ok", false);
            Throwable c = Json.unwrap(t);
            if (c instanceof SparkError se) {
                end.addProperty("condition", se.condition);
            }
            if (c.getCause() != null) {
                end.addProperty("cause", c.getCause().getClass().getSimpleName());
                end.addProperty("cause_message", String.valueOf(c.getCause().getMessage()));
            }
            t.printStackTrace(System.err);
        } finally {
            watchdog.disarm();
        }
        Json.emit(end);
        return end.get("ok").getAsBoolean();
    }

    void dispatch(String op, JsonObject req) throws Exception {
        switch (op) {
            case "version" -> KafkaHarness.version();
            case "batch_read" -> batchRead(req);
            case "stream_start" -> streamStart(req);
            case "stream_trigger" -> stream(req).trigger(Json.bool(req, "available_now", false));
            case "stream_available_now" -> stream(req).availableNow();
            case "stream_stop" -> {
                Stream s = streams.remove(Json.requireStr(req, "stream"));
                if (s != null) {
                    s.close();
                }
            }
            case "write" -> write(req);
            case "close_producers" -> closeProducers();
            case "produce" -> KafkaHarness.produce(req);
            case "txn" -> KafkaHarness.txn(req);
            case "admin" -> AdminOps.run(req);
            case "txn_open" -> txnOpen(req);
            case "txn_finish" -> txnFinish(req);
            case "produce_background" -> produceBackground(req);
            case "join_background" -> joinBackground(req);
            default -> throw new IllegalArgumentException("unknown op " + op);
        }
    }

    void closeAll() {
        for (Stream s : streams.values()) {
            s.close();
        }
        streams.clear();
        closeProducers();
        openTxns.values().forEach(p -> p.close(Duration.ZERO));
        openTxns.clear();
    }

    /** Ends the process when one request outlives its deadline_ms (a hang must not stall the tests). */
    static final class Watchdog {
        private volatile long deadline;
        private volatile String op = "";

        Watchdog() {
            Thread t = new Thread(() -> {
                while (true) {
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                    long d = deadline;
                    if (d > 0 && System.currentTimeMillis() > d) {
                        Json.emit(Json.obj("type", "fatal", "op", op, "error", "Watchdog",
                                "message", "the request took longer than its deadline_ms; exiting"));
                        Runtime.getRuntime().halt(3);
                    }
                }
            }, "spark-calls-watchdog");
            t.setDaemon(true);
            t.start();
        }

        void arm(String op, long ms) {
            this.op = op;
            this.deadline = System.currentTimeMillis() + ms;
        }

        void disarm() {
            this.deadline = 0;
        }
    }

    /** An error Spark raises with an error condition (the text is ours, the condition is Spark's). */
    static final class SparkError extends IllegalStateException {
        private static final long serialVersionUID = 1L;
        final String condition;

        SparkError(String condition, String message, Throwable cause) {
            super("[" + condition + "] " + message, cause);
            this.condition = condition;
        }
    }

    // ------------------------------------------------------------------ options (KafkaSourceProvider)

    /** The source/sink options as Spark sees them: case-insensitive keys, original keys kept. */
    static final class Options {
        final Map<String, String> original = new LinkedHashMap<>();
        private final Map<String, String> lower = new HashMap<>();

        Options(JsonObject o) {
            if (o != null) {
                for (Map.Entry<String, JsonElement> e : o.entrySet()) {
                    if (!e.getValue().isJsonNull()) {
                        String v = Json.configValue(e.getValue());
                        original.put(e.getKey(), v);
                        lower.put(e.getKey().toLowerCase(Locale.ROOT), v);
                    }
                }
            }
        }

        boolean has(String key) {
            return lower.containsKey(key.toLowerCase(Locale.ROOT));
        }

        String get(String key, String dflt) {
            return lower.getOrDefault(key.toLowerCase(Locale.ROOT), dflt);
        }

        /** The "kafka."-prefixed options with the prefix dropped: what Spark hands to the clients. */
        Map<String, String> kafkaParams() {
            Map<String, String> out = new TreeMap<>();
            original.forEach((k, v) -> {
                if (k.toLowerCase(Locale.ROOT).startsWith("kafka.")) {
                    out.put(k.substring(6), v);
                }
            });
            return out;
        }
    }

    static final List<String> STRATEGY_KEYS = List.of("subscribe", "subscribepattern", "assign");

    /** Spark's checks of the options every read makes (validateGeneralOptions). */
    static void validateGeneral(Options o) {
        List<String> given = new ArrayList<>();
        for (String k : STRATEGY_KEYS) {
            if (o.has(k)) {
                given.add(k);
            }
        }
        if (given.isEmpty()) {
            throw new IllegalArgumentException("One of the following options must be specified for Kafka source: "
                    + String.join(", ", STRATEGY_KEYS) + ". See the docs for more details.");
        }
        if (given.size() > 1) {
            throw new IllegalArgumentException("Only one of the following options can be specified for Kafka source: "
                    + String.join(", ", STRATEGY_KEYS) + ". See the docs for more details.");
        }
        String value = o.get(given.get(0), "");
        switch (given.get(0)) {
            case "assign" -> {
                if (!value.trim().startsWith("{")) {
                    throw new IllegalArgumentException("No topicpartitions to assign as specified value for option 'assign' is '" + value + "'");
                }
            }
            case "subscribe" -> {
                if (splitTopics(value).isEmpty()) {
                    throw new IllegalArgumentException("No topics to subscribe to as specified value for option 'subscribe' is '" + value + "'");
                }
            }
            default -> {
                if (value.trim().isEmpty()) {
                    throw new IllegalArgumentException("Pattern to subscribe is empty as specified value for option 'subscribePattern' is '" + value + "'");
                }
            }
        }
        if (o.has("kafka.auto.offset.reset")) {
            throw new IllegalArgumentException("Kafka option 'auto.offset.reset' is not supported. Instead set the source "
                    + "option 'startingoffsets' to 'earliest' or 'latest' to specify where to start.");
        }
        for (String k : List.of("key.deserializer", "value.deserializer", "enable.auto.commit", "interceptor.classes")) {
            if (o.has("kafka." + k)) {
                throw new IllegalArgumentException("Kafka option '" + k + "' is not supported");
            }
        }
        if (!o.has("kafka.bootstrap.servers")) {
            throw new IllegalArgumentException("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer");
        }
        if (o.has("kafka.group.id")) {
            Json.emit(Json.obj("type", "warning", "message", "Kafka option 'kafka.group.id' has been set on this query"));
        }
    }

    static void validateStream(Options o) {
        if (o.has("endingOffsets")) {
            throw new IllegalArgumentException("ending offset not valid in streaming queries");
        }
        if (o.has("endingOffsetsByTimestamp")) {
            throw new IllegalArgumentException("ending timestamp not valid in streaming queries");
        }
        validateGeneral(o);
    }

    static void validateBatch(Options o, Limit start, Limit end) {
        if (start.kind == Kind.LATEST) {
            throw new IllegalArgumentException("starting offset can't be latest for batch queries on Kafka");
        }
        if (start.kind == Kind.OFFSETS) {
            start.map.forEach((tp, off) -> {
                if (off == LATEST) {
                    throw new IllegalArgumentException("startingOffsets for " + tp + " can't be latest for batch queries on Kafka");
                }
            });
        }
        if (end.kind == Kind.EARLIEST) {
            throw new IllegalArgumentException("ending offset can't be earliest for batch queries on Kafka");
        }
        if (end.kind == Kind.OFFSETS) {
            end.map.forEach((tp, off) -> {
                if (off == EARLIEST) {
                    throw new IllegalArgumentException("ending offset for " + tp + " can't be earliest for batch queries on Kafka");
                }
            });
        }
        validateGeneral(o);
    }

    /** The driver's configs (kafkaParamsForDriver): used for the Admin that reads offsets. */
    static Map<String, Object> driverParams(Map<String, String> specified) {
        Map<String, Object> p = new TreeMap<>(specified);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("max.poll.records", 1);
        p.putIfAbsent("receive.buffer.bytes", 65536);
        return p;
    }

    /** The executors' configs (kafkaParamsForExecutors): the consumers that read the records. */
    static Map<String, Object> executorParams(Map<String, String> specified, String uniqueGroupId) {
        Map<String, Object> p = new TreeMap<>(specified);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "none");
        p.putIfAbsent("group.id", uniqueGroupId + "-executor");
        p.put("enable.auto.commit", "false");
        p.putIfAbsent("receive.buffer.bytes", 65536);
        return p;
    }

    /** The sink's configs (kafkaParamsForProducer): the "kafka."-options and the serializers only. */
    static Map<String, Object> producerParams(Options o) {
        if (o.has("kafka.key.serializer") || o.has("kafka.value.serializer")) {
            throw new IllegalArgumentException("Kafka option 'key.serializer'/'value.serializer' is not supported "
                    + "as keys and values are serialized with ByteArraySerializer.");
        }
        Map<String, Object> p = new TreeMap<>(o.kafkaParams());
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        return p;
    }

    static JsonObject configsJson(Map<String, Object> p) {
        JsonObject o = new JsonObject();
        p.forEach((k, v) -> o.addProperty(k, String.valueOf(v)));
        return o;
    }

    static List<String> splitTopics(String value) {
        List<String> out = new ArrayList<>();
        for (String t : value.split(",")) {
            if (!t.trim().isEmpty()) {
                out.add(t.trim());
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ offset range limits

    enum Kind { EARLIEST, LATEST, OFFSETS, TIMESTAMPS, GLOBAL_TIMESTAMP }

    /** KafkaOffsetRangeLimit: earliest, latest, offsets or timestamps per partition, one timestamp. */
    record Limit(Kind kind, Map<TopicPartition, Long> map, long timestamp, boolean noMatchLatest) {}

    /** getKafkaOffsetRangeLimit: a global timestamp wins over timestamps per partition over offsets. */
    static Limit limit(Options o, String globalTsKey, String byTsKey, String offsetsKey, Kind dflt) {
        String strategy = o.get("startingOffsetsByTimestampStrategy", "error").toLowerCase(Locale.ROOT);
        if (!strategy.equals("error") && !strategy.equals("latest")) {
            throw new IllegalArgumentException("startingOffsetsByTimestampStrategy must be error or latest: " + strategy);
        }
        boolean noMatchLatest = strategy.equals("latest");
        if (o.has(globalTsKey)) {
            String ts = o.get(globalTsKey, "").trim();
            try {
                return new Limit(Kind.GLOBAL_TIMESTAMP, Map.of(), Long.parseLong(ts), noMatchLatest);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Expected a single long value, got " + ts);
            }
        }
        if (o.has(byTsKey)) {
            return new Limit(Kind.TIMESTAMPS, partitionLongs(o.get(byTsKey, "").trim()), 0, noMatchLatest);
        }
        if (o.has(offsetsKey)) {
            String v = o.get(offsetsKey, "").trim();
            if (v.equalsIgnoreCase("latest")) {
                return new Limit(Kind.LATEST, Map.of(), 0, noMatchLatest);
            }
            if (v.equalsIgnoreCase("earliest")) {
                return new Limit(Kind.EARLIEST, Map.of(), 0, noMatchLatest);
            }
            return new Limit(Kind.OFFSETS, partitionLongs(v), 0, noMatchLatest);
        }
        return new Limit(dflt, Map.of(), 0, noMatchLatest);
    }

    /** {"topicA":{"0":23,"1":-1},"topicB":{"0":-2}} (JsonUtils.partitionOffsets / partitionTimestamps). */
    static Map<TopicPartition, Long> partitionLongs(String json) {
        try {
            Map<TopicPartition, Long> out = new LinkedHashMap<>();
            JsonObject topics = JsonParser.parseString(json).getAsJsonObject();
            for (Map.Entry<String, JsonElement> t : topics.entrySet()) {
                for (Map.Entry<String, JsonElement> p : t.getValue().getAsJsonObject().entrySet()) {
                    out.put(new TopicPartition(t.getKey(), Integer.parseInt(p.getKey())), p.getValue().getAsLong());
                }
            }
            return out;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Expected e.g. {\"topicA\":{\"0\":23,\"1\":-1},\"topicB\":{\"0\":-2}}, got " + json);
        }
    }

    /** {"topicA":[0,1],"topicB":[0]} (JsonUtils.partitions, the "assign" option). */
    static List<TopicPartition> partitionList(String json) {
        try {
            List<TopicPartition> out = new ArrayList<>();
            JsonObject topics = JsonParser.parseString(json).getAsJsonObject();
            for (Map.Entry<String, JsonElement> t : topics.entrySet()) {
                for (JsonElement p : t.getValue().getAsJsonArray()) {
                    out.add(new TopicPartition(t.getKey(), p.getAsInt()));
                }
            }
            return out;
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Expected e.g. {\"topicA\":[0,1],\"topicB\":[0,1]}, got " + json);
        }
    }

    static JsonObject offsetsJson(Map<TopicPartition, Long> offsets) {
        JsonObject out = new JsonObject();
        for (TopicPartition tp : sorted(offsets.keySet())) {
            if (!out.has(tp.topic())) {
                out.add(tp.topic(), new JsonObject());
            }
            out.getAsJsonObject(tp.topic()).addProperty(Integer.toString(tp.partition()), offsets.get(tp));
        }
        return out;
    }

    static List<TopicPartition> sorted(Collection<TopicPartition> tps) {
        List<TopicPartition> out = new ArrayList<>(tps);
        out.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        return out;
    }

    // ------------------------------------------------------------------ driver (KafkaOffsetReaderAdmin)

    /** ConsumerStrategy: which partitions a query reads, asked of the Admin each time. */
    static final class Strategy {
        final String kind;
        final List<String> topics;
        final List<TopicPartition> assigned;
        final Pattern pattern;

        Strategy(Options o) {
            if (o.has("assign")) {
                kind = "assign";
                assigned = partitionList(o.get("assign", ""));
                topics = null;
                pattern = null;
            } else if (o.has("subscribe")) {
                kind = "subscribe";
                topics = splitTopics(o.get("subscribe", ""));
                assigned = null;
                pattern = null;
            } else {
                kind = "subscribePattern";
                pattern = Pattern.compile(o.get("subscribePattern", "").trim());
                topics = null;
                assigned = null;
            }
        }

        Set<TopicPartition> partitions(Admin admin) throws Exception {
            return switch (kind) {
                case "assign" -> {
                    Set<String> names = new HashSet<>();
                    assigned.forEach(tp -> names.add(tp.topic()));
                    Set<TopicPartition> all = describe(admin, names);
                    all.retainAll(new HashSet<>(assigned));
                    yield all;
                }
                case "subscribe" -> describe(admin, new HashSet<>(topics));
                default -> {
                    // listTopics leaves internal topics out; the pattern only has to match somewhere
                    // in the name (Scala's Regex.findFirstIn), not the whole name.
                    Set<String> names = new HashSet<>();
                    Collection<TopicListing> listings = admin.listTopics().listings().get();
                    for (TopicListing l : listings) {
                        if (pattern.matcher(l.name()).find()) {
                            names.add(l.name());
                        }
                    }
                    Json.emit(Json.obj("type", "call", "client", "admin", "api", "listTopics",
                            "matched", new ArrayList<>(new java.util.TreeSet<>(names))));
                    yield describe(admin, names);
                }
            };
        }

        static Set<TopicPartition> describe(Admin admin, Set<String> topics) throws Exception {
            Map<String, TopicDescription> found = admin.describeTopics(topics).allTopicNames().get();
            Set<TopicPartition> out = new HashSet<>();
            for (Map.Entry<String, TopicDescription> e : found.entrySet()) {
                if (e.getValue().isInternal()) {
                    continue;
                }
                for (TopicPartitionInfo p : e.getValue().partitions()) {
                    out.add(new TopicPartition(e.getKey(), p.partition()));
                }
            }
            Json.emit(Json.obj("type", "call", "client", "admin", "api", "describeTopics",
                    "topics", new ArrayList<>(new java.util.TreeSet<>(topics)), "partitions", out.size()));
            return out;
        }
    }

    interface DataLossReporter {
        void report(String condition, String message);
    }

    /** KafkaOffsetReaderAdmin: every offset the driver needs, through one Admin. */
    static final class OffsetReader implements AutoCloseable {
        final Strategy strategy;
        final Map<String, Object> driverParams;
        final int maxAttempts;
        final long retryIntervalMs;
        final IsolationLevel isolation;
        private Admin admin;

        OffsetReader(Strategy strategy, Map<String, Object> driverParams, Options o) {
            this.strategy = strategy;
            this.driverParams = driverParams;
            this.maxAttempts = Integer.parseInt(o.get("fetchOffset.numRetries", "3"));
            this.retryIntervalMs = Long.parseLong(o.get("fetchOffset.retryIntervalMs", "1000"));
            Object iso = driverParams.get("isolation.level");
            this.isolation = IsolationLevel.valueOf(
                    (iso == null ? "read_uncommitted" : iso.toString()).toUpperCase(Locale.ROOT));
        }

        Admin admin() {
            if (admin == null) {
                admin = Admin.create(driverParams);
            }
            return admin;
        }

        @Override
        public void close() {
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
                admin = null;
            }
        }

        Map<TopicPartition, Long> listOffsets(Map<TopicPartition, OffsetSpec> query, String spec) throws Exception {
            Map<TopicPartition, ListOffsetsResultInfo> r = listOffsetsInfo(query, spec);
            Map<TopicPartition, Long> out = new HashMap<>();
            r.forEach((tp, info) -> out.put(tp, info.offset()));
            return out;
        }

        Map<TopicPartition, ListOffsetsResultInfo> listOffsetsInfo(Map<TopicPartition, OffsetSpec> query, String spec)
                throws Exception {
            Map<TopicPartition, ListOffsetsResultInfo> r =
                    admin().listOffsets(query, new ListOffsetsOptions(isolation)).all().get();
            Map<TopicPartition, Long> shown = new HashMap<>();
            r.forEach((tp, info) -> shown.put(tp, info.offset()));
            Json.emit(Json.obj("type", "call", "client", "admin", "api", "listOffsets", "spec", spec,
                    "isolation_level", isolation.toString(), "offsets", offsetsJson(shown)));
            return r;
        }

        interface Body {
            Map<TopicPartition, Long> run(Set<TopicPartition> partitions) throws Exception;
        }

        /**
         * partitionsAssignedToAdmin + withRetries: up to fetchOffset.numRetries attempts, a new Admin
         * after each failure. Like Spark (NonFatal), it retries any failure, its own checks included.
         */
        Map<TopicPartition, Long> withPartitions(Body body) throws Exception {
            Throwable last = null;
            for (int attempt = 1; attempt <= maxAttempts; attempt++) {
                try {
                    return body.run(strategy.partitions(admin()));
                } catch (Exception | AssertionError e) {
                    last = e;
                    Json.emit(Json.withError(Json.obj("type", "retry", "attempt", attempt), e));
                    Thread.sleep(retryIntervalMs);
                    close();
                }
            }
            if (last instanceof Exception e) {
                throw e;
            }
            throw (AssertionError) last;
        }

        /** fetchPartitionOffsets: the offsets a batch query starts or ends at; -2/-1 resolve later. */
        Map<TopicPartition, Long> partitionOffsets(Limit limit, boolean starting) throws Exception {
            Set<TopicPartition> partitions = strategy.partitions(admin());
            Map<TopicPartition, Long> out = new HashMap<>();
            switch (limit.kind) {
                case EARLIEST -> partitions.forEach(tp -> out.put(tp, EARLIEST));
                case LATEST -> partitions.forEach(tp -> out.put(tp, LATEST));
                case OFFSETS -> {
                    checkSame(partitions, limit.map.keySet(), "startingOffsets");
                    out.putAll(limit.map);
                }
                case TIMESTAMPS -> out.putAll(timestampOffsets(limit, starting));
                case GLOBAL_TIMESTAMP -> out.putAll(timestampOffsets(limit, starting));
                default -> throw new IllegalStateException(limit.kind.toString());
            }
            return out;
        }

        static void checkSame(Set<TopicPartition> assigned, Set<TopicPartition> specified, String what) {
            if (!assigned.equals(specified)) {
                throw new AssertionError("If " + what + " contains specific offsets, you must specify all "
                        + "TopicPartitions. Use -1 for latest, -2 for earliest. Specified: " + specified
                        + " Assigned: " + assigned);
            }
        }

        /** fetchSpecificOffsets: the given offsets, with -1/-2 resolved by listOffsets latest/earliest. */
        Map<TopicPartition, Long> specificOffsets(Map<TopicPartition, Long> offsets) throws Exception {
            return withPartitions(partitions -> {
                checkSame(partitions, offsets.keySet(), "startingOffsets");
                return resolve(offsets);
            });
        }

        Map<TopicPartition, Long> resolve(Map<TopicPartition, Long> offsets) throws Exception {
            Map<TopicPartition, OffsetSpec> query = new HashMap<>();
            offsets.forEach((tp, off) -> {
                if (off == LATEST) {
                    query.put(tp, OffsetSpec.latest());
                } else if (off == EARLIEST) {
                    query.put(tp, OffsetSpec.earliest());
                }
            });
            // One call with both kinds mixed, as Spark does (the Admin splits it per spec).
            Map<TopicPartition, Long> resolved = query.isEmpty() ? Map.of() : listOffsets(query, "resolve");
            Map<TopicPartition, Long> out = new HashMap<>();
            offsets.forEach((tp, off) -> out.put(tp, off == LATEST || off == EARLIEST ? resolved.get(tp) : off));
            return out;
        }

        /** fetchSpecificTimestampBasedOffsets / fetchGlobalTimestampBasedOffsets. */
        Map<TopicPartition, Long> timestampOffsets(Limit limit, boolean starting) throws Exception {
            return withPartitions(partitions -> {
                Map<TopicPartition, Long> timestamps = new HashMap<>();
                if (limit.kind == Kind.TIMESTAMPS) {
                    if (!partitions.equals(limit.map.keySet())) {
                        throw new AssertionError("If starting/endingOffsetsByTimestamp contains specific offsets, you "
                                + "must specify all topics. Specified: " + limit.map.keySet() + " Assigned: " + partitions);
                    }
                    timestamps.putAll(limit.map);
                } else {
                    partitions.forEach(tp -> timestamps.put(tp, limit.timestamp));
                }
                Map<TopicPartition, OffsetSpec> query = new HashMap<>();
                timestamps.forEach((tp, ts) -> query.put(tp, OffsetSpec.forTimestamp(ts)));
                Map<TopicPartition, ListOffsetsResultInfo> found = listOffsetsInfo(query, "timestamp");
                Map<TopicPartition, Long> offsets = new HashMap<>();
                for (Map.Entry<TopicPartition, ListOffsetsResultInfo> e : found.entrySet()) {
                    long off = e.getValue().offset();
                    if (off == -1L) {  // no record at or after the timestamp
                        if (starting && !limit.noMatchLatest) {
                            throw new IllegalArgumentException("No offset matched from request of topic-partition "
                                    + e.getKey() + " and timestamp " + timestamps.get(e.getKey()) + ".");
                        }
                        off = LATEST;
                    }
                    offsets.put(e.getKey(), off);
                }
                return resolve(offsets);
            });
        }

        Map<TopicPartition, Long> earliestOffsets() throws Exception {
            return withPartitions(partitions -> {
                Map<TopicPartition, OffsetSpec> query = new HashMap<>();
                partitions.forEach(tp -> query.put(tp, OffsetSpec.earliest()));
                return listOffsets(query, "earliest");
            });
        }

        /** fetchEarliestOffsets(newPartitions): partitions deleted meanwhile are left out. */
        Map<TopicPartition, Long> earliestOffsets(Set<TopicPartition> newPartitions) throws Exception {
            if (newPartitions.isEmpty()) {
                return Map.of();
            }
            return withPartitions(partitions -> {
                Map<TopicPartition, OffsetSpec> query = new HashMap<>();
                newPartitions.stream().filter(partitions::contains).forEach(tp -> query.put(tp, OffsetSpec.earliest()));
                return query.isEmpty() ? Map.of() : listOffsets(query, "earliest");
            });
        }

        /** fetchLatestOffsets: with known offsets, asks again (up to the attempts) while one went backwards. */
        Map<TopicPartition, Long> latestOffsets(Map<TopicPartition, Long> known) throws Exception {
            return withPartitions(partitions -> {
                Map<TopicPartition, OffsetSpec> query = new HashMap<>();
                partitions.forEach(tp -> query.put(tp, OffsetSpec.latest()));
                Map<TopicPartition, Long> latest = listOffsets(query, "latest");
                if (known == null) {
                    return latest;
                }
                for (int attempt = 1; attempt < maxAttempts; attempt++) {
                    boolean backwards = false;
                    for (Map.Entry<TopicPartition, Long> e : latest.entrySet()) {
                        Long k = known.get(e.getKey());
                        if (k != null && k > e.getValue()) {
                            backwards = true;
                        }
                    }
                    if (!backwards) {
                        break;
                    }
                    Json.emit(Json.obj("type", "warning", "message", "latest offsets went backwards; asking again"));
                    Thread.sleep(retryIntervalMs);
                    latest = listOffsets(query, "latest");
                }
                return latest;
            });
        }

        /** getOffsetRangesFromUnresolvedOffsets (batch): one range per partition, -2/-1 left to the executor. */
        List<long[]> unresolvedRanges(Limit start, Limit end, List<TopicPartition> order) throws Exception {
            Map<TopicPartition, Long> from = partitionOffsets(start, true);
            Map<TopicPartition, Long> until = partitionOffsets(end, false);
            if (!from.keySet().equals(until.keySet())) {
                throw new IllegalStateException("different topic partitions for starting offsets topics["
                        + from.keySet() + "] and ending offsets topics[" + until.keySet() + "]");
            }
            List<long[]> ranges = new ArrayList<>();
            for (TopicPartition tp : sorted(until.keySet())) {
                order.add(tp);
                ranges.add(new long[] {from.get(tp), until.get(tp)});
            }
            return ranges;
        }

        /** getOffsetRangesFromResolvedOffsets (streaming): new partitions from earliest, data loss checks. */
        Map<TopicPartition, long[]> resolvedRanges(Map<TopicPartition, Long> from, Map<TopicPartition, Long> until,
                                                   DataLossReporter reportDataLoss) throws Exception {
            Set<TopicPartition> newPartitions = new HashSet<>(until.keySet());
            newPartitions.removeAll(from.keySet());
            Map<TopicPartition, Long> newOffsets = earliestOffsets(newPartitions);
            if (!newOffsets.keySet().equals(newPartitions)) {
                Set<TopicPartition> gone = new HashSet<>(newPartitions);
                gone.removeAll(newOffsets.keySet());
                reportDataLoss.report("KAFKA_DATA_LOSS.INITIAL_OFFSET_NOT_FOUND_FOR_PARTITIONS",
                        "Cannot find earliest offsets of " + gone + ". Some data may have been missed");
            }
            if (!newOffsets.isEmpty()) {
                Json.emit(Json.obj("type", "partitions_added", "offsets", offsetsJson(newOffsets)));
            }
            for (Map.Entry<TopicPartition, Long> e : newOffsets.entrySet()) {
                if (e.getValue() != 0) {
                    reportDataLoss.report("KAFKA_DATA_LOSS.ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO",
                            "Added partition " + e.getKey() + " starts from " + e.getValue()
                                    + " instead of 0. Some data may have been missed");
                }
            }
            Set<TopicPartition> deleted = new HashSet<>(from.keySet());
            deleted.removeAll(until.keySet());
            if (!deleted.isEmpty()) {
                reportDataLoss.report("KAFKA_DATA_LOSS.PARTITIONS_DELETED",
                        deleted + " are gone. Some data may have been missed.");
            }
            Map<TopicPartition, long[]> ranges = new LinkedHashMap<>();
            for (TopicPartition tp : sorted(until.keySet())) {
                Long f = from.containsKey(tp) ? from.get(tp) : newOffsets.get(tp);
                if (f == null) {
                    continue;
                }
                long u = until.get(tp);
                if (u < f) {
                    reportDataLoss.report("KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED", "Partition " + tp
                            + "'s offset was changed from " + f + " to " + u + ", some data may have been missed");
                }
                if (u - f > 0) {  // KafkaOffsetRangeCalculator drops empty and backwards ranges
                    ranges.put(tp, new long[] {f, u});
                }
            }
            return ranges;
        }
    }

    // ------------------------------------------------------------------ executors (KafkaDataConsumer)

    /** One executor's reader of one topic-partition: InternalKafkaConsumer + FetchedData + get(). */
    static final class PartitionConsumer implements AutoCloseable {
        final TopicPartition tp;
        final String groupId;
        final KafkaConsumer<byte[], byte[]> consumer;
        // FetchedData: the records of the last poll, where they end, and the range at that time.
        private ListIterator<ConsumerRecord<byte[], byte[]>> records = Collections.emptyListIterator();
        private long nextOffsetInFetched = UNKNOWN_OFFSET;
        private long offsetAfterPoll = UNKNOWN_OFFSET;
        private long availableEarliest = UNKNOWN_OFFSET;
        // Spark's per-task metrics and ours.
        long polls;
        long offsetOutOfRange;
        long dataLoss;
        final List<String> skipped = new ArrayList<>();

        PartitionConsumer(TopicPartition tp, Map<String, Object> executorParams) {
            this.tp = tp;
            this.groupId = String.valueOf(executorParams.get("group.id"));
            this.consumer = new KafkaConsumer<>(executorParams);
            this.consumer.assign(List.of(tp));
        }

        @Override
        public void close() {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        }

        void resetFetched() {
            records = Collections.emptyListIterator();
            nextOffsetInFetched = UNKNOWN_OFFSET;
            offsetAfterPoll = UNKNOWN_OFFSET;
            availableEarliest = UNKNOWN_OFFSET;
        }

        /** getAvailableOffsetRange: seekToBeginning + position, seekToEnd + position. */
        long[] availableRange() {
            consumer.seekToBeginning(List.of(tp));
            long earliest = consumer.position(tp);
            consumer.seekToEnd(List.of(tp));
            long latest = consumer.position(tp);
            return new long[] {earliest, latest};
        }

        /** InternalKafkaConsumer.fetch: seek, poll, position; an empty poll is out of range or a timeout. */
        void fetch(long offset, long pollTimeoutMs) throws Exception {
            consumer.seek(tp, offset);
            ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(pollTimeoutMs));
            polls++;
            List<ConsumerRecord<byte[], byte[]>> r = polled.records(tp);
            long after = consumer.position(tp);
            long[] range = availableRange();
            if (r.isEmpty()) {
                if (offset < range[0] || offset >= range[1]) {
                    throw new OffsetOutOfRangeException(Map.of(tp, offset));
                } else if (offset == after) {
                    throw new java.util.concurrent.TimeoutException(
                            "Cannot fetch record for offset " + offset + " in " + pollTimeoutMs + " milliseconds");
                }
            }
            records = new ArrayList<>(r).listIterator();
            nextOffsetInFetched = UNKNOWN_OFFSET;
            offsetAfterPoll = after;
            availableEarliest = range[0];
        }

        /**
         * KafkaDataConsumer.get: the record at offset, or the next visible one before untilOffset (gaps
         * from compaction, markers and aborted records are skipped); null when none is left. Offsets no
         * longer in the log fail with Spark's data-loss error, or are skipped with failOnDataLoss=false.
         */
        ConsumerRecord<byte[], byte[]> get(long offset, long untilOffset, long pollTimeoutMs, boolean failOnDataLoss)
                throws Exception {
            if (offset >= untilOffset) {
                throw new IllegalArgumentException("offset must always be less than untilOffset [offset: " + offset
                        + ", untilOffset: " + untilOffset + "]");
            }
            long toFetch = offset;
            while (toFetch != UNKNOWN_OFFSET) {
                try {
                    Object[] fetched = fetchRecord(toFetch, untilOffset, pollTimeoutMs, failOnDataLoss);
                    @SuppressWarnings("unchecked")
                    ConsumerRecord<byte[], byte[]> rec = (ConsumerRecord<byte[], byte[]>) fetched[0];
                    if (rec != null) {
                        return rec;
                    }
                    toFetch = (Long) fetched[1];
                    if (toFetch >= untilOffset) {
                        resetFetched();
                        toFetch = UNKNOWN_OFFSET;
                    }
                } catch (OffsetOutOfRangeException e) {
                    resetFetched();
                    if (failOnDataLoss) {
                        throw dataLossError(toFetch, untilOffset, e);
                    }
                    dataLoss++;
                    long old = toFetch;
                    toFetch = earliestAvailableBetween(toFetch, untilOffset);
                    offsetOutOfRange += (toFetch == UNKNOWN_OFFSET ? untilOffset : toFetch) - old;
                }
            }
            resetFetched();
            return null;
        }

        /** getEarliestAvailableOffsetBetween: where reading can go on inside [offset, untilOffset). */
        long earliestAvailableBetween(long offset, long untilOffset) {
            long[] range = availableRange();
            if (offset >= range[1] || range[0] >= untilOffset) {
                skipped.add("[" + offset + ", " + untilOffset + ")");
                return UNKNOWN_OFFSET;
            } else if (offset >= range[0]) {
                return offset;  // the offset came back (a topic deleted and re-created)
            } else {
                skipped.add("[" + offset + ", " + range[0] + ")");
                return range[0];
            }
        }

        SparkError dataLossError(long start, long end, Throwable cause) {
            dataLoss++;
            return new SparkError("KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE",
                    "Some data may have been lost because they are not available in Kafka any more. Could not read "
                            + "records in offset [" + start + ", " + end + ") for topic partition " + tp
                            + " with consumer group " + groupId + ". If you don't want your streaming query to fail "
                            + "on such cases, set the source option failOnDataLoss to false.", cause);
        }

        /** fetchRecord: {record or null, next offset to fetch}. */
        Object[] fetchRecord(long offset, long untilOffset, long pollTimeoutMs, boolean failOnDataLoss)
                throws Exception {
            if (offset != nextOffsetInFetched) {
                fetch(offset, pollTimeoutMs);  // first fetch, or the fetched data was reset
            } else if (!records.hasNext()) {
                if (offset < offsetAfterPoll) {
                    // [offset, offsetAfterPoll) holds nothing visible: go on from offsetAfterPoll
                    long next = offsetAfterPoll;
                    resetFetched();
                    return new Object[] {null, next};
                }
                fetch(offset, pollTimeoutMs);
            }
            if (!records.hasNext()) {
                // The poll moved the position but gave no visible record: skip to where it got to.
                if (offset > offsetAfterPoll) {
                    throw new IllegalStateException("seek to " + offset + " and poll but the offset was reset to "
                            + offsetAfterPoll);
                }
                return new Object[] {null, offsetAfterPoll};
            }
            ConsumerRecord<byte[], byte[]> record = records.next();
            nextOffsetInFetched = record.offset() + 1;
            if (record.offset() > offset) {
                if (availableEarliest <= offset) {
                    // offset is still in the log but invisible (compacted away, a marker, aborted): skip it,
                    // stepping back so the next call returns this record.
                    records.previous();
                    nextOffsetInFetched = record.offset();
                    return new Object[] {null, record.offset()};
                }
                // Records aged out between planning and reading.
                if (failOnDataLoss) {
                    throw dataLossError(offset, record.offset(), null);
                } else if (record.offset() >= untilOffset) {
                    dataLoss++;
                    skipped.add("[" + offset + ", " + untilOffset + ")");
                    return new Object[] {null, untilOffset};
                } else {
                    dataLoss++;
                    skipped.add("[" + offset + ", " + record.offset() + ")");
                    return new Object[] {record, nextOffsetInFetched};
                }
            } else if (record.offset() < offset) {
                throw new IllegalStateException("Tried to fetch " + offset + " but the returned record offset was "
                        + record.offset());
            }
            return new Object[] {record, nextOffsetInFetched};
        }
    }

    /** KafkaRecordToRowConverter: the row Spark makes of a record. */
    static JsonObject row(ConsumerRecord<byte[], byte[]> r, boolean includeHeaders) {
        JsonObject o = Json.obj("type", "row", "topic", r.topic(), "partition", r.partition(), "offset", r.offset(),
                "timestamp", r.timestamp(), "timestampType", r.timestampType().id);
        Json.putBytes(o, "key", r.key());
        Json.putBytes(o, "value", r.value());
        if (includeHeaders) {
            o.add("headers", r.headers().iterator().hasNext() ? Json.headers(r.headers()) : null);
        }
        return o;
    }

    /**
     * One Spark task: resolve -2/-1 against the available range, then get() offset by offset until
     * untilOffset or until nothing visible is left. Returns the rows read.
     */
    static long readRange(PartitionConsumer c, long from, long until, long pollTimeoutMs, boolean failOnDataLoss,
                          boolean includeHeaders, boolean batchRelation, Long batchId) throws Exception {
        long resolvedFrom = from;
        long resolvedUntil = until;
        if (from < 0 || until < 0) {
            long[] range = c.availableRange();
            resolvedFrom = from < 0 ? range[0] : from;
            resolvedUntil = until < 0 ? range[1] : until;
        }
        if (batchRelation && resolvedFrom > resolvedUntil) {
            throw new AssertionError("Beginning offset " + resolvedFrom + " is after the ending offset " + resolvedUntil
                    + " for topic " + c.tp.topic() + " partition " + c.tp.partition() + ". You either provided an "
                    + "invalid fromOffset, or the Kafka topic has been damaged");
        }
        long rows = 0;
        long next = resolvedFrom;
        long pollsBefore = c.polls;
        while (next < resolvedUntil) {
            ConsumerRecord<byte[], byte[]> r = c.get(next, resolvedUntil, pollTimeoutMs, failOnDataLoss);
            if (r == null) {
                break;
            }
            JsonObject line = row(r, includeHeaders);
            if (batchId != null) {
                line.addProperty("batch", batchId);
            }
            Json.emit(line);
            rows++;
            next = r.offset() + 1;
        }
        Json.emit(Json.obj("type", "range_read", "topic", c.tp.topic(), "partition", c.tp.partition(),
                "from", from, "until", until, "resolved_from", resolvedFrom, "resolved_until", resolvedUntil,
                "rows", rows, "polls", c.polls - pollsBefore, "offset_out_of_range", c.offsetOutOfRange,
                "data_loss", c.dataLoss, "skipped", new ArrayList<>(c.skipped), "group_id", c.groupId,
                "batch", batchId));
        c.skipped.clear();
        return rows;
    }

    static long pollTimeoutMs(Options o) {
        return Long.parseLong(o.get("kafkaConsumer.pollTimeoutMs", Long.toString(DEFAULT_POLL_TIMEOUT_MS)));
    }

    static boolean failOnDataLoss(Options o) {
        return Boolean.parseBoolean(o.get("failOnDataLoss", "true"));
    }

    // ------------------------------------------------------------------ batch (KafkaRelation, KafkaSourceRDD)

    void batchRead(JsonObject req) throws Exception {
        Options o = new Options(Json.object(req, "options"));
        Limit start = limit(o, "startingTimestamp", "startingOffsetsByTimestamp", "startingOffsets", Kind.EARLIEST);
        Limit end = limit(o, "endingTimestamp", "endingOffsetsByTimestamp", "endingOffsets", Kind.LATEST);
        validateBatch(o, start, end);
        Map<String, String> specified = o.kafkaParams();
        String uniqueGroupId = o.get("groupIdPrefix", "spark-kafka-relation") + "-" + UUID.randomUUID();
        Map<String, Object> driver = driverParams(specified);
        Map<String, Object> executor = executorParams(specified, uniqueGroupId);
        boolean includeHeaders = Boolean.parseBoolean(o.get("includeHeaders", "false"));
        Json.emit(Json.obj("type", "configs", "driver", configsJson(driver), "executor", configsJson(executor)));
        List<TopicPartition> order = new ArrayList<>();
        List<long[]> ranges;
        try (OffsetReader reader = new OffsetReader(new Strategy(o), driver, o)) {
            ranges = reader.unresolvedRanges(start, end, order);
        }
        JsonArray plan = new JsonArray();
        for (int i = 0; i < order.size(); i++) {
            plan.add(Json.obj("topic", order.get(i).topic(), "partition", order.get(i).partition(),
                    "from", ranges.get(i)[0], "until", ranges.get(i)[1]));
        }
        Json.emit(Json.obj("type", "plan", "ranges", plan));
        long rows = 0;
        for (int i = 0; i < order.size(); i++) {
            try (PartitionConsumer c = new PartitionConsumer(order.get(i), executor)) {
                rows += readRange(c, ranges.get(i)[0], ranges.get(i)[1], pollTimeoutMs(o), failOnDataLoss(o),
                        includeHeaders, true, null);
            }
        }
        Json.emit(Json.obj("type", "done", "rows", rows));
    }

    // ------------------------------------------------------------------ streaming (KafkaMicroBatchStream)

    Stream stream(JsonObject req) {
        String name = Json.requireStr(req, "stream");
        Stream s = streams.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no stream " + name + " (stream_start first)");
        }
        return s;
    }

    void streamStart(JsonObject req) throws Exception {
        String name = Json.requireStr(req, "stream");
        if (streams.containsKey(name)) {
            throw new IllegalArgumentException("stream " + name + " is already running");
        }
        Options o = new Options(Json.object(req, "options"));
        validateStream(o);
        String checkpoint = Json.str(req, "checkpoint", "/tmp/checkpoint-" + name);
        Stream s = new Stream(o, checkpoint);
        streams.put(name, s);
        try {
            s.start();
        } catch (Exception e) {
            streams.remove(name).close();
            throw e;
        }
    }

    /** A running streaming query's source: the driver's offset reader and the executors' consumers. */
    static final class Stream implements AutoCloseable {
        final Options o;
        final OffsetReader reader;
        final Map<String, Object> executor;
        final boolean failOnDataLoss;
        final boolean includeHeaders;
        final long pollTimeoutMs;
        final Limit starting;
        // The consumer pool: Spark keeps one consumer per (group id, partition) alive between batches.
        final Map<TopicPartition, PartitionConsumer> pool = new HashMap<>();
        Map<TopicPartition, Long> committed;
        Map<TopicPartition, Long> availableNowEnd;
        long batchId;
        boolean firstBatchRun;

        Stream(Options o, String checkpoint) {
            this.o = o;
            Map<String, String> specified = o.kafkaParams();
            String uniqueGroupId = o.get("groupIdPrefix", "spark-kafka-source") + "-" + UUID.randomUUID() + "-"
                    + checkpoint.hashCode();
            Map<String, Object> driver = driverParams(specified);
            this.executor = executorParams(specified, uniqueGroupId);
            this.reader = new OffsetReader(new Strategy(o), driver, o);
            this.failOnDataLoss = failOnDataLoss(o);
            this.includeHeaders = Boolean.parseBoolean(o.get("includeHeaders", "false"));
            this.pollTimeoutMs = pollTimeoutMs(o);
            this.starting = limit(o, "startingTimestamp", "startingOffsetsByTimestamp", "startingOffsets", Kind.LATEST);
            Json.emit(Json.obj("type", "configs", "driver", configsJson(driver), "executor", configsJson(executor)));
        }

        /** initialOffset: resolved once and written to the checkpoint (we keep it in memory). */
        void start() throws Exception {
            committed = switch (starting.kind) {
                case EARLIEST -> reader.earliestOffsets();
                case LATEST -> reader.latestOffsets(null);
                case OFFSETS -> reader.specificOffsets(starting.map);
                case TIMESTAMPS, GLOBAL_TIMESTAMP -> reader.timestampOffsets(starting, true);
            };
            Json.emit(Json.obj("type", "initial_offsets", "offsets", offsetsJson(committed)));
        }

        void reportDataLoss(String condition, String message) {
            if (failOnDataLoss) {
                throw new SparkError(condition, message + ". Some data may have been lost because they are not "
                        + "available in Kafka any more. If you don't want your streaming query to fail on such "
                        + "cases, set the source option \"failOnDataLoss\" to \"false\".", null);
            }
            Json.emit(Json.obj("type", "data_loss", "condition", condition, "message", message));
        }

        /**
         * One trigger: latestOffset(start) (with AvailableNow, the end fetched once at the first trigger),
         * then, if the offsets moved (or it is the first batch), planInputPartitions and the tasks.
         */
        boolean trigger(boolean availableNow) throws Exception {
            Map<TopicPartition, Long> end;
            if (availableNow) {
                if (availableNowEnd == null) {
                    availableNowEnd = reader.latestOffsets(committed);
                }
                end = availableNowEnd;
            } else {
                end = reader.latestOffsets(committed);
            }
            if (end.isEmpty() || (firstBatchRun && end.equals(committed))) {
                Json.emit(Json.obj("type", "no_batch", "offsets", offsetsJson(committed)));
                return false;
            }
            if (availableNow) {
                Map<TopicPartition, Long> latest = reader.latestOffsets(end);
                for (TopicPartition tp : end.keySet()) {
                    if (!latest.containsKey(tp) || end.get(tp) > latest.get(tp)) {
                        throw new IllegalStateException("the end offset of " + tp + " is past the latest offset");
                    }
                }
            }
            Map<TopicPartition, long[]> ranges = reader.resolvedRanges(committed, end, this::reportDataLoss);
            long rows = 0;
            for (Map.Entry<TopicPartition, long[]> r : ranges.entrySet()) {
                PartitionConsumer c = pool.computeIfAbsent(r.getKey(), tp -> new PartitionConsumer(tp, executor));
                try {
                    rows += readRange(c, r.getValue()[0], r.getValue()[1], pollTimeoutMs, failOnDataLoss,
                            includeHeaders, false, batchId);
                } catch (Exception e) {
                    pool.remove(r.getKey()).close();  // a failed task's consumer is not reused
                    throw e;
                }
            }
            Json.emit(Json.obj("type", "batch", "batch_id", batchId, "start", offsetsJson(committed),
                    "end", offsetsJson(end), "rows", rows));
            committed = end;
            batchId++;
            firstBatchRun = true;
            return true;
        }

        /** Trigger.AvailableNow: batches up to the latest offsets of the first trigger, then stop. */
        void availableNow() throws Exception {
            availableNowEnd = null;  // each run (a query started with the trigger) fetches its own end
            for (int i = 0; i < 100 && trigger(true); i++) {
                if (committed.equals(availableNowEnd)) {
                    break;
                }
            }
        }

        @Override
        public void close() {
            pool.values().forEach(PartitionConsumer::close);
            pool.clear();
            reader.close();
        }
    }

    // ------------------------------------------------------------------ sink (KafkaWriteTask)

    void write(JsonObject req) throws Exception {
        Options o = new Options(Json.object(req, "options"));
        Map<String, Object> params = producerParams(o);
        String defaultTopic = o.has("topic") ? o.get("topic", "").trim() : null;
        String key = params.toString();
        KafkaProducer<byte[], byte[]> producer = producers.get(key);
        if (producer == null) {
            producer = new KafkaProducer<>(params);
            producers.put(key, producer);
            Json.emit(Json.obj("type", "configs", "producer", configsJson(params)));
        }
        Exception[] failed = new Exception[1];
        Callback callback = (metadata, e) -> {
            synchronized (failed) {
                if (failed[0] == null && e != null) {
                    failed[0] = e;
                }
            }
        };
        JsonArray rows = Json.arr(req, "rows");
        long sent = 0;
        for (JsonElement el : rows == null ? new JsonArray() : rows) {
            synchronized (failed) {
                if (failed[0] != null) {
                    break;
                }
            }
            JsonObject r = el.getAsJsonObject();
            if (!r.has("value") && !r.has("value_b64")) {
                throw new IllegalArgumentException("Required attribute 'value' not found");  // Spark's analysis check
            }
            // The "topic" option wins over the topic column.
            String topic = defaultTopic != null ? defaultTopic : Json.str(r, "topic", null);
            if (topic == null) {
                throw new SparkError("KAFKA_NULL_TOPIC_IN_DATA", "Null topic present in the data. Use the topic "
                        + "option for setting a default topic.", null);
            }
            List<Header> headers = null;
            JsonArray hs = Json.arr(r, "headers");
            if (hs != null) {
                headers = new ArrayList<>();
                for (JsonElement h : hs) {
                    JsonObject ho = h.getAsJsonObject();
                    headers.add(new RecordHeader(Json.requireStr(ho, "key"), Json.bytes(ho, "value")));
                }
            }
            ProducerRecord<byte[], byte[]> record = headers == null
                    ? new ProducerRecord<>(topic, Json.integer(r, "partition", null), Json.lng(r, "timestamp", null),
                            Json.bytes(r, "key"), Json.bytes(r, "value"))
                    : new ProducerRecord<>(topic, Json.integer(r, "partition", null), Json.lng(r, "timestamp", null),
                            Json.bytes(r, "key"), Json.bytes(r, "value"), headers);
            producer.send(record, callback);
            sent++;
        }
        producer.flush();
        synchronized (failed) {
            if (failed[0] != null) {
                throw failed[0];
            }
        }
        Json.emit(Json.obj("type", "written", "rows", sent));
    }

    void closeProducers() {
        producers.values().forEach(p -> p.close(Duration.ofSeconds(5)));
        producers.clear();
    }

    // ------------------------------------------------------------------ test set-up: an open transaction

    /** Begins a transaction, sends the records and flushes them, and leaves it open (txn_finish ends it). */
    void txnOpen(JsonObject req) {
        String id = Json.requireStr(req, "transactional_id");
        if (openTxns.containsKey(id)) {
            throw new IllegalStateException("transaction " + id + " is already open");
        }
        long timeout = KafkaHarness.timeoutMs(req);
        java.util.Properties props = KafkaHarness.producerProps(req, timeout);
        props.put("transactional.id", id);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        try {
            producer.initTransactions();
            producer.beginTransaction();
            JsonArray records = KafkaHarness.requireRecords(req);
            for (JsonElement r : records) {
                producer.send(KafkaHarness.toRecord(r.getAsJsonObject(), Json.str(req, "topic", null)));
            }
            producer.flush();
        } catch (RuntimeException e) {
            producer.close(Duration.ZERO);
            throw e;
        }
        openTxns.put(id, producer);
        Json.emit(Json.obj("type", "txn_open", "transactional_id", id));
    }

    void txnFinish(JsonObject req) {
        String id = Json.requireStr(req, "transactional_id");
        KafkaProducer<byte[], byte[]> producer = openTxns.remove(id);
        if (producer == null) {
            throw new IllegalStateException("no open transaction " + id);
        }
        try {
            if (Json.str(req, "end", "commit").equals("commit")) {
                producer.commitTransaction();
            } else {
                producer.abortTransaction();
            }
        } finally {
            producer.close(Duration.ofSeconds(5));
        }
        Json.emit(Json.obj("type", "txn_finished", "transactional_id", id));
    }

    // ------------------------------------------------------------------ a producer running alongside

    void produceBackground(JsonObject req) {
        if (background != null && background.isAlive()) {
            throw new IllegalStateException("a background producer is already running");
        }
        String topic = Json.requireStr(req, "topic");
        int count = Json.integer(req, "count", 10);
        long pauseMs = Json.lng(req, "pause_ms", 20L);
        String prefix = Json.str(req, "prefix", "v");
        Map<String, Object> params = new HashMap<>();
        params.put("bootstrap.servers", Json.requireStr(req, "bootstrap"));
        params.put("key.serializer", ByteArraySerializer.class.getName());
        params.put("value.serializer", ByteArraySerializer.class.getName());
        params.put("linger.ms", 0);
        backgroundResult[0] = 0;
        backgroundResult[1] = 0;
        background = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(params)) {
                for (int i = 0; i < count; i++) {
                    try {
                        p.send(new ProducerRecord<>(topic, (prefix + i).getBytes(StandardCharsets.UTF_8))).get();
                        synchronized (backgroundResult) {
                            backgroundResult[0]++;
                        }
                        Thread.sleep(pauseMs);
                    } catch (ExecutionException e) {
                        synchronized (backgroundResult) {
                            backgroundResult[1]++;
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "background-producer");
        background.setDaemon(true);
        background.start();
        Json.emit(Json.obj("type", "background_started", "count", count));
    }

    void joinBackground(JsonObject req) throws InterruptedException {
        if (background == null) {
            throw new IllegalStateException("no background producer");
        }
        long waitMs = Json.lng(req, "timeout_ms", 60_000L);
        if (waitMs > 0) {
            background.join(waitMs);  // join(0) would wait forever: 0 means "just report"
        }
        boolean alive = background.isAlive();
        synchronized (backgroundResult) {
            Json.emit(Json.obj("type", "background_done", "sent", backgroundResult[0], "errors", backgroundResult[1],
                    "finished", !alive));
        }
    }
}
