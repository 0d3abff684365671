import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.header.Header;

/**
 * JSON in and out for the harness: reading arguments, building the output objects, and the one
 * place that writes to the real stdout (one JSON object per line).
 *
 * <p>Bytes (keys, values, header values) go out twice: as {@code name} (a UTF-8 string; JSON null
 * for a null field; left out when the bytes are not valid UTF-8) and as {@code name_b64} (base64,
 * exact). They come in as either {@code name} (UTF-8 text) or {@code name_b64}.
 */
final class Json {
    private Json() {}

    static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();

    /** The process's real stdout. System.out is pointed at stderr so nothing else can write here. */
    private static final PrintStream STDOUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    static synchronized void emit(JsonObject line) {
        STDOUT.println(GSON.toJson(line));
        STDOUT.flush();
    }

    static void printText(String text) {
        STDOUT.print(text);
        STDOUT.flush();
    }

    static JsonObject parseObject(String text) {
        JsonElement e = JsonParser.parseString(text.isBlank() ? "{}" : text);
        if (!e.isJsonObject()) {
            throw new IllegalArgumentException("arguments must be a JSON object, got: " + text);
        }
        return e.getAsJsonObject();
    }

    // ------------------------------------------------------------------ building output

    /** obj("a", 1, "b", "x") -> {"a": 1, "b": "x"}; values go through {@link #of}. */
    static JsonObject obj(Object... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("obj() needs key/value pairs");
        }
        JsonObject o = new JsonObject();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            o.add((String) keysAndValues[i], of(keysAndValues[i + 1]));
        }
        return o;
    }

    static JsonElement of(Object v) {
        if (v == null) {
            return JsonNull.INSTANCE;
        }
        if (v instanceof JsonElement e) {
            return e;
        }
        if (v instanceof String s) {
            return new JsonPrimitive(s);
        }
        if (v instanceof Number n) {
            return new JsonPrimitive(n);
        }
        if (v instanceof Boolean b) {
            return new JsonPrimitive(b);
        }
        if (v instanceof Optional<?> opt) {
            return of(opt.orElse(null));
        }
        if (v instanceof Collection<?> c) {
            JsonArray a = new JsonArray();
            for (Object item : c) {
                a.add(of(item));
            }
            return a;
        }
        if (v instanceof Map<?, ?> m) {
            JsonObject o = new JsonObject();
            for (Map.Entry<?, ?> en : m.entrySet()) {
                o.add(String.valueOf(en.getKey()), of(en.getValue()));
            }
            return o;
        }
        return new JsonPrimitive(v.toString());
    }

    /** Adds {@code name} (UTF-8 text, when it is valid UTF-8) and {@code name_b64} for the bytes. */
    static void putBytes(JsonObject o, String name, byte[] bytes) {
        if (bytes == null) {
            o.add(name, JsonNull.INSTANCE);
            o.add(name + "_b64", JsonNull.INSTANCE);
            return;
        }
        String text = utf8OrNull(bytes);
        if (text != null) {
            o.addProperty(name, text);
        }
        o.addProperty(name + "_b64", Base64.getEncoder().encodeToString(bytes));
    }

    static byte[] bytesOf(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        ByteBuffer dup = buffer.duplicate();
        byte[] out = new byte[dup.remaining()];
        dup.get(out);
        return out;
    }

    static String utf8OrNull(byte[] bytes) {
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return chars.toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    static JsonArray headers(Iterable<Header> headers) {
        JsonArray out = new JsonArray();
        for (Header h : headers) {
            JsonObject o = obj("key", h.key());
            putBytes(o, "value", h.value());
            out.add(o);
        }
        return out;
    }

    /** {"error": simple class name, "error_class", "message", "retriable"} added to {@code o}. */
    static JsonObject withError(JsonObject o, Throwable t) {
        Throwable c = unwrap(t);
        o.addProperty("error", c.getClass().getSimpleName());
        o.addProperty("error_class", c.getClass().getName());
        o.add("message", of(c.getMessage()));
        o.addProperty("retriable", c instanceof RetriableException);
        return o;
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof CompletionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    // ------------------------------------------------------------------ reading arguments

    static boolean has(JsonObject o, String key) {
        return o != null && o.has(key) && !o.get(key).isJsonNull();
    }

    static String str(JsonObject o, String key, String dflt) {
        return has(o, key) ? o.get(key).getAsString() : dflt;
    }

    static String requireStr(JsonObject o, String key) {
        if (!has(o, key)) {
            throw new IllegalArgumentException("missing argument: " + key);
        }
        return o.get(key).getAsString();
    }

    static Long lng(JsonObject o, String key, Long dflt) {
        return has(o, key) ? Long.valueOf(o.get(key).getAsLong()) : dflt;
    }

    static Integer integer(JsonObject o, String key, Integer dflt) {
        return has(o, key) ? Integer.valueOf(o.get(key).getAsInt()) : dflt;
    }

    static boolean bool(JsonObject o, String key, boolean dflt) {
        return has(o, key) ? o.get(key).getAsBoolean() : dflt;
    }

    static JsonArray arr(JsonObject o, String key) {
        return has(o, key) ? o.get(key).getAsJsonArray() : null;
    }

    static JsonObject object(JsonObject o, String key) {
        return has(o, key) ? o.get(key).getAsJsonObject() : null;
    }

    /** The bytes given as {@code name} (UTF-8 text) or {@code name_b64}; null if neither is set. */
    static byte[] bytes(JsonObject o, String name) {
        if (has(o, name + "_b64")) {
            return Base64.getDecoder().decode(o.get(name + "_b64").getAsString());
        }
        if (has(o, name)) {
            return o.get(name).getAsString().getBytes(StandardCharsets.UTF_8);
        }
        return null;
    }

    /** A JSON value as the string a Kafka config expects (numbers and booleans as their text). */
    static String configValue(JsonElement v) {
        if (v.isJsonPrimitive()) {
            JsonPrimitive p = v.getAsJsonPrimitive();
            if (p.isNumber()) {
                // 5 and 5.0 both come back as "5", not "5.0"
                double d = p.getAsDouble();
                if (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 9.0e15) {
                    return Long.toString((long) d);
                }
            }
            return p.getAsString();
        }
        if (v.isJsonArray()) {
            StringBuilder sb = new StringBuilder();
            for (JsonElement e : v.getAsJsonArray()) {
                if (sb.length() > 0) {
                    sb.append(',');
                }
                sb.append(configValue(e));
            }
            return sb.toString();
        }
        throw new IllegalArgumentException("config values must be strings, numbers, booleans or lists: " + v);
    }
}
