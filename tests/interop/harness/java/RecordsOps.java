import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Record batches without a broker, built and read by the client's own record code
 * (org.apache.kafka.common.record.internal, i.e. what the producer writes and the consumer reads):
 * {@code batch} builds one, {@code decode} reads bytes made elsewhere (our mockbroker/protocol/records code,
 * for instance), {@code codecs} checks every compression codec works on this machine.
 *
 * <p>These use kafka-clients' internal classes: fine for a harness pinned to one client version.
 */
final class RecordsOps {
    private RecordsOps() {}

    static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");

    static MemoryRecords build(JsonObject a, String compression, JsonArray records) {
        TimestampType tsType = TimestampType.forName(Json.str(a, "timestamp_type", "CreateTime"));
        long now = System.currentTimeMillis();
        ByteBuffer buffer = ByteBuffer.allocate(1024 + 2 * Json.GSON.toJson(records).length());
        MemoryRecordsBuilder b = MemoryRecords.builder(buffer, RecordBatch.MAGIC_VALUE_V2,
                Compression.of(compression).build(), tsType,
                Json.lng(a, "base_offset", 0L),
                Json.lng(a, "log_append_time", now),
                Json.lng(a, "producer_id", -1L),
                Json.integer(a, "producer_epoch", -1).shortValue(),
                Json.integer(a, "base_sequence", -1),
                Json.bool(a, "transactional", false),
                Json.integer(a, "partition_leader_epoch", -1));
        for (JsonElement e : records) {
            ProducerRecord<byte[], byte[]> r = KafkaHarness.toRecord(e.getAsJsonObject(), "-");
            long ts = r.timestamp() == null ? now : r.timestamp();
            b.append(ts, r.key(), r.value(), r.headers().toArray());
        }
        return b.build();
    }

    static byte[] bytesOf(MemoryRecords records) {
        ByteBuffer buf = records.buffer().duplicate();
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }

    static int batch(JsonObject a) {
        String compression = Json.str(a, "compression", "none");
        MemoryRecords records = build(a, compression, KafkaHarness.requireRecords(a));
        byte[] bytes = bytesOf(records);
        Json.emit(Json.obj("type", "batch", "compression", compression, "size_bytes", bytes.length,
                "batch_b64", Base64.getEncoder().encodeToString(bytes)));
        emitDecoded(bytes);
        return 0;
    }

    static int decode(JsonObject a) {
        emitDecoded(Base64.getDecoder().decode(Json.requireStr(a, "batch_b64")));
        return 0;
    }

    static void emitDecoded(byte[] bytes) {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
        int index = 0;
        for (MutableRecordBatch b : records.batches()) {
            JsonObject info = Json.obj("type", "batch_info", "index", index,
                    "base_offset", b.baseOffset(), "last_offset", b.lastOffset(), "magic", (int) b.magic(),
                    "compression", b.compressionType().name, "timestamp_type", b.timestampType().name,
                    "max_timestamp", b.maxTimestamp(), "producer_id", b.producerId(),
                    "producer_epoch", (int) b.producerEpoch(), "base_sequence", b.baseSequence(),
                    "last_sequence", b.lastSequence(), "transactional", b.isTransactional(),
                    "control", b.isControlBatch(), "partition_leader_epoch", b.partitionLeaderEpoch(),
                    "count", b.countOrNull(), "size_bytes", b.sizeInBytes(), "crc", b.checksum(),
                    "valid", b.isValid());
            Json.emit(info);
            if (!b.isValid()) {
                index++;
                continue;
            }
            for (Record r : b) {
                JsonObject o = Json.obj("type", "batch_record", "batch", index, "offset", r.offset(),
                        "sequence", r.sequence(), "timestamp", r.timestamp());
                Json.putBytes(o, "key", r.hasKey() ? Json.bytesOf(r.key()) : null);
                Json.putBytes(o, "value", r.hasValue() ? Json.bytesOf(r.value()) : null);
                o.add("headers", Json.headers(Arrays.asList(r.headers())));
                Json.emit(o);
            }
            index++;
        }
    }

    /** Round-trips a small batch through each codec; a codec whose native library fails shows here. */
    static int codecs(JsonObject a) {
        JsonArray records = new JsonArray();
        for (int i = 0; i < 20; i++) {
            JsonObject r = Json.obj("key", "k" + i, "value", "value " + i + " " + "x".repeat(100), "timestamp", 1_700_000_000_000L + i,
                    "headers", List.of(Json.obj("key", "h", "value", "v" + i)));
            records.add(r);
        }
        for (String codec : CODECS) {
            JsonObject line = Json.obj("type", "codec", "codec", codec);
            try {
                byte[] bytes = bytesOf(build(a, codec, records));
                List<String> values = new ArrayList<>();
                String seen = null;
                for (MutableRecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches()) {
                    b.ensureValid();
                    seen = b.compressionType().name;
                    for (Record r : b) {
                        values.add(StandardCharsets.UTF_8.decode(r.value()).toString());
                        Header[] hs = r.headers();
                        if (hs.length != 1 || !hs[0].key().equals("h")) {
                            throw new IllegalStateException("headers did not round-trip");
                        }
                    }
                }
                if (values.size() != 20 || !values.get(19).startsWith("value 19 ") || !codec.equals(seen)) {
                    throw new IllegalStateException("round trip mismatch: " + values.size() + " records, codec " + seen);
                }
                line.addProperty("ok", true);
                line.addProperty("size_bytes", bytes.length);
            } catch (Throwable t) {
                // native library failures are Errors (UnsatisfiedLinkError, NoClassDefFoundError)
                line.addProperty("ok", false);
                Json.withError(line, t);
            }
            Json.emit(line);
        }
        return 0;
    }
}
