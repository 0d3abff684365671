import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.confluent.kafka.serializers.KafkaAvroDeserializer;
import io.confluent.kafka.serializers.KafkaAvroSerializer;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.io.JsonEncoder;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SerializationException;

/**
 * Confluent's Avro serializers (kafka-avro-serializer 7.0.16 with kafka-schema-registry-client) against
 * a Schema Registry:
 * <pre>
 *   avro-produce {bootstrap, registry, topic, schema, values: [&lt;Avro JSON encoding of a value&gt;],
 *                 registry_config?: {...}}
 *       A producer whose value.serializer is KafkaAvroSerializer (schema.registry.url = registry, plus
 *       registry_config) sends each value as a GenericRecord of schema (an Avro schema as JSON text).
 *       -> serialize_error {index, message, cause} (a registry refusal); sent {partition, offset}; done {sent}
 *   avro-consume {bootstrap, registry, topic, count, registry_config?: {...}}
 *       Reads count records from the beginning of every partition and deserializes each value with
 *       KafkaAvroDeserializer. -> value {offset, schema_id, value (Avro JSON), schema}; done {count}
 * </pre>
 */
final class RegistryOps {
    private RegistryOps() {}

    static Map<String, Object> serdeConfig(JsonObject a) {
        Map<String, Object> config = new HashMap<>();
        config.put("schema.registry.url", Json.requireStr(a, "registry"));
        JsonObject extra = Json.object(a, "registry_config");
        if (extra != null) {
            for (Map.Entry<String, JsonElement> e : extra.entrySet()) {
                config.put(e.getKey(), Json.configValue(e.getValue()));
            }
        }
        return config;
    }

    static int produce(JsonObject a) throws Exception {
        long timeout = KafkaHarness.timeoutMs(a);
        String topic = Json.requireStr(a, "topic");
        Schema schema = new Schema.Parser().parse(Json.requireStr(a, "schema"));
        JsonArray values = Json.arr(a, "values");
        if (values == null) {
            throw new IllegalArgumentException("missing argument: values");
        }
        Properties props = KafkaHarness.producerProps(a, timeout);
        props.putAll(serdeConfig(a));
        props.put("value.serializer", KafkaAvroSerializer.class.getName());
        GenericDatumReader<Object> reader = new GenericDatumReader<>(schema);
        int sent = 0;
        try (KafkaProducer<byte[], Object> producer = new KafkaProducer<>(props)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < values.size(); i++) {
                String json = Json.GSON.toJson(values.get(i));
                Object datum = reader.read(null, DecoderFactory.get().jsonDecoder(schema, json));
                try {
                    futures.add(producer.send(new ProducerRecord<>(topic, null, datum)));
                } catch (SerializationException e) {  // the registry refused: its answer is the cause
                    Throwable cause = e.getCause();
                    Json.emit(Json.obj("type", "serialize_error", "index", i, "message", e.getMessage(),
                            "cause", cause == null ? null : cause.getClass().getSimpleName() + ": " + cause.getMessage()));
                }
            }
            producer.flush();
            for (int i = 0; i < futures.size(); i++) {
                RecordMetadata m = futures.get(i).get(timeout, java.util.concurrent.TimeUnit.MILLISECONDS);
                Json.emit(Json.obj("type", "sent", "partition", m.partition(), "offset", m.offset()));
                sent++;
            }
        }
        Json.emit(Json.obj("type", "done", "sent", sent));
        return 0;
    }

    static int consume(JsonObject a) throws Exception {
        long timeout = KafkaHarness.timeoutMs(a);
        String topic = Json.requireStr(a, "topic");
        int want = Json.integer(a, "count", 1);
        KafkaAvroDeserializer deserializer = new KafkaAvroDeserializer();
        deserializer.configure(serdeConfig(a), false);
        int count = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(KafkaHarness.consumerProps(a, timeout))) {
            List<TopicPartition> parts = new ArrayList<>();
            consumer.partitionsFor(topic, Duration.ofMillis(timeout))
                    .forEach(p -> parts.add(new TopicPartition(topic, p.partition())));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long end = System.currentTimeMillis() + timeout;
            while (count < want && System.currentTimeMillis() < end) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    byte[] bytes = r.value();
                    int id = ByteBuffer.wrap(bytes, 1, 4).getInt();
                    Object datum = deserializer.deserialize(topic, bytes);
                    Schema schema = ((GenericRecord) datum).getSchema();
                    Json.emit(Json.obj("type", "value", "offset", r.offset(), "schema_id", id,
                            "value", Json.parseObject(toJson(schema, datum)), "schema", schema.toString()));
                    count++;
                }
            }
        } finally {
            deserializer.close();
        }
        Json.emit(Json.obj("type", "done", "count", count));
        return 0;
    }

    static String toJson(Schema schema, Object datum) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        JsonEncoder encoder = EncoderFactory.get().jsonEncoder(schema, out);
        new GenericDatumWriter<Object>(schema).write(datum, encoder);
        encoder.flush();
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
}
