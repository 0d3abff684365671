import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;

/**
 * The client quota operations of the {@code admin} command (AdminOps dispatches to them):
 * <pre>
 *   alterClientQuotas {entries: [{entity: {user|client-id|ip: name or null}, ops: {key: value or null}}],
 *                      validate_only?}
 *       -> results [{entity, result: "ok" | {error, message}}]
 *   describeClientQuotas {}   (every entity: ClientQuotaFilter.all())
 *       -> quotas [{entity: {type: name or null}, values: {key: value}}]
 * </pre>
 */
final class QuotaOps {
    private QuotaOps() {}

    static ClientQuotaEntity entity(JsonObject o) {
        Map<String, String> m = new HashMap<>();
        for (Map.Entry<String, JsonElement> e : o.entrySet()) {
            m.put(e.getKey(), e.getValue().isJsonNull() ? null : e.getValue().getAsString());
        }
        return new ClientQuotaEntity(m);
    }

    static JsonObject entityJson(ClientQuotaEntity entity) {
        JsonObject o = new JsonObject();
        for (Map.Entry<String, String> e : new TreeMap<>(entity.entries()).entrySet()) {
            o.addProperty(e.getKey(), e.getValue());
        }
        return o;
    }

    static void alter(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<ClientQuotaAlteration> alterations = new ArrayList<>();
        for (JsonElement e : Json.arr(op, "entries")) {
            JsonObject entry = e.getAsJsonObject();
            List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
            for (Map.Entry<String, JsonElement> kv : entry.getAsJsonObject("ops").entrySet()) {
                ops.add(new ClientQuotaAlteration.Op(kv.getKey(),
                        kv.getValue().isJsonNull() ? null : kv.getValue().getAsDouble()));
            }
            alterations.add(new ClientQuotaAlteration(entity(entry.getAsJsonObject("entity")), ops));
        }
        org.apache.kafka.clients.admin.AlterClientQuotasOptions options =
                new org.apache.kafka.clients.admin.AlterClientQuotasOptions().validateOnly(Json.bool(op, "validate_only", false));
        Map<ClientQuotaEntity, KafkaFuture<Void>> values = admin.alterClientQuotas(alterations, options).values();
        com.google.gson.JsonArray results = new com.google.gson.JsonArray();
        for (Map.Entry<ClientQuotaEntity, KafkaFuture<Void>> e : values.entrySet()) {
            JsonObject r = new JsonObject();
            r.add("entity", entityJson(e.getKey()));
            try {
                e.getValue().get(timeout, TimeUnit.MILLISECONDS);
                r.addProperty("result", "ok");
            } catch (Exception ex) {
                r.add("result", Json.withError(new JsonObject(), ex));
            }
            results.add(r);
        }
        out.add("results", results);
    }

    static void describe(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        Map<ClientQuotaEntity, Map<String, Double>> quotas =
                admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(timeout, TimeUnit.MILLISECONDS);
        com.google.gson.JsonArray list = new com.google.gson.JsonArray();
        for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : quotas.entrySet()) {
            JsonObject q = new JsonObject();
            q.add("entity", entityJson(e.getKey()));
            JsonObject values = new JsonObject();
            for (Map.Entry<String, Double> v : new TreeMap<>(e.getValue()).entrySet()) {
                values.addProperty(v.getKey(), v.getValue());
            }
            q.add("values", values);
            list.add(q);
        }
        out.add("quotas", list);
    }
}
