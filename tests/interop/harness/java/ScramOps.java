import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeUserScramCredentialsResult;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.common.KafkaFuture;

/**
 * The SCRAM user operations of the {@code admin} command (AdminOps dispatches to them):
 * <pre>
 *   alterUserScramCredentials {upsert?: [{user, mechanism, password, iterations?=4096}],
 *                              delete?: [{user, mechanism}]}
 *       -> results {user: "ok" | {error, message}}
 *   describeUserScramCredentials {users?}   (no users: every user)
 *       -> users {user: [{mechanism, iterations}] | {error, message}}
 * </pre>
 * mechanism: SCRAM-SHA-256 or SCRAM-SHA-512.
 */
final class ScramOps {
    private ScramOps() {}

    static void alter(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<UserScramCredentialAlteration> alterations = new ArrayList<>();
        JsonArray upserts = Json.arr(op, "upsert");
        if (upserts != null) {
            for (JsonElement e : upserts) {
                JsonObject u = e.getAsJsonObject();
                ScramCredentialInfo info = new ScramCredentialInfo(
                        ScramMechanism.fromMechanismName(Json.requireStr(u, "mechanism")),
                        Json.integer(u, "iterations", 4096));
                alterations.add(new UserScramCredentialUpsertion(Json.requireStr(u, "user"), info,
                        Json.requireStr(u, "password")));
            }
        }
        JsonArray deletes = Json.arr(op, "delete");
        if (deletes != null) {
            for (JsonElement e : deletes) {
                JsonObject d = e.getAsJsonObject();
                alterations.add(new UserScramCredentialDeletion(Json.requireStr(d, "user"),
                        ScramMechanism.fromMechanismName(Json.requireStr(d, "mechanism"))));
            }
        }
        Map<String, KafkaFuture<Void>> values = admin.alterUserScramCredentials(alterations).values();
        JsonObject results = new JsonObject();
        for (Map.Entry<String, KafkaFuture<Void>> e : new TreeMap<>(values).entrySet()) {
            try {
                e.getValue().get(timeout, TimeUnit.MILLISECONDS);
                results.addProperty(e.getKey(), "ok");
            } catch (Exception ex) {
                results.add(e.getKey(), Json.withError(new JsonObject(), ex));
            }
        }
        out.add("results", results);
    }

    static void describe(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<String> users = AdminOps.strings(op, "users");
        DescribeUserScramCredentialsResult r = users.isEmpty()
                ? admin.describeUserScramCredentials() : admin.describeUserScramCredentials(users);
        List<String> names = users.isEmpty() ? r.users().get(timeout, TimeUnit.MILLISECONDS) : users;
        Map<String, JsonElement> found = new LinkedHashMap<>();
        for (String user : new java.util.TreeSet<>(names)) {
            try {
                UserScramCredentialsDescription d = r.description(user).get(timeout, TimeUnit.MILLISECONDS);
                JsonArray infos = new JsonArray();
                for (ScramCredentialInfo info : d.credentialInfos()) {
                    infos.add(Json.obj("mechanism", info.mechanism().mechanismName(),
                            "iterations", info.iterations()));
                }
                found.put(user, infos);
            } catch (Exception ex) {
                found.put(user, Json.withError(new JsonObject(), ex));
            }
        }
        JsonObject usersOut = new JsonObject();
        found.forEach(usersOut::add);
        out.add("users", usersOut);
    }
}
