import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DeleteAclsResult;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The ACL operations of the {@code admin} command (AdminOps dispatches to them):
 * <pre>
 *   createAcls {acls: [{resource_type, name, pattern?="LITERAL", principal, host?="*", operation,
 *               permission?="ALLOW"}]}                       -> results ["ok" | {error, message}]
 *   describeAcls {filter?: {resource_type?="ANY", name?, pattern?="ANY", principal?, host?,
 *                 operation?="ANY", permission?="ANY"}}      -> acls [binding] | error
 *   deleteAcls {filters: [filter]}                           -> results [{deleted: [binding]} | {error}]
 * </pre>
 * A binding is {resource_type, name, pattern, principal, host, operation, permission} in Kafka's names.
 */
final class AclOps {
    private AclOps() {}

    static void create(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<AclBinding> bindings = new ArrayList<>();
        for (JsonElement e : Json.arr(op, "acls")) {
            JsonObject a = e.getAsJsonObject();
            bindings.add(new AclBinding(
                    new ResourcePattern(ResourceType.fromString(Json.requireStr(a, "resource_type")),
                            Json.requireStr(a, "name"), PatternType.fromString(Json.str(a, "pattern", "LITERAL"))),
                    new AccessControlEntry(Json.requireStr(a, "principal"), Json.str(a, "host", "*"),
                            AclOperation.fromString(Json.requireStr(a, "operation")),
                            AclPermissionType.fromString(Json.str(a, "permission", "ALLOW")))));
        }
        var values = admin.createAcls(bindings).values();
        JsonArray results = new JsonArray();
        for (AclBinding b : bindings) {
            try {
                values.get(b).get(timeout, TimeUnit.MILLISECONDS);
                results.add("ok");
            } catch (Exception ex) {
                results.add(Json.withError(new JsonObject(), ex));
            }
        }
        out.add("results", results);
    }

    static void describe(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        JsonObject f = Json.has(op, "filter") ? Json.object(op, "filter") : new JsonObject();
        Collection<AclBinding> found = admin.describeAcls(filter(f)).values().get(timeout, TimeUnit.MILLISECONDS);
        out.add("acls", bindings(found));
    }

    static void delete(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<AclBindingFilter> filters = new ArrayList<>();
        for (JsonElement e : Json.arr(op, "filters")) {
            filters.add(filter(e.getAsJsonObject()));
        }
        var values = admin.deleteAcls(filters).values();
        JsonArray results = new JsonArray();
        for (AclBindingFilter f : filters) {
            try {
                DeleteAclsResult.FilterResults r = values.get(f).get(timeout, TimeUnit.MILLISECONDS);
                List<AclBinding> deleted = new ArrayList<>();
                r.values().forEach(v -> deleted.add(v.binding()));
                results.add(Json.obj("deleted", bindings(deleted)));
            } catch (Exception ex) {
                results.add(Json.withError(new JsonObject(), ex));
            }
        }
        out.add("results", results);
    }

    private static AclBindingFilter filter(JsonObject f) {
        return new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.fromString(Json.str(f, "resource_type", "ANY")),
                        Json.str(f, "name", null), PatternType.fromString(Json.str(f, "pattern", "ANY"))),
                new AccessControlEntryFilter(Json.str(f, "principal", null), Json.str(f, "host", null),
                        AclOperation.fromString(Json.str(f, "operation", "ANY")),
                        AclPermissionType.fromString(Json.str(f, "permission", "ANY"))));
    }

    private static JsonArray bindings(Collection<AclBinding> found) {
        JsonArray out = new JsonArray();
        for (AclBinding b : found) {
            out.add(Json.obj("resource_type", b.pattern().resourceType().name(), "name", b.pattern().name(),
                    "pattern", b.pattern().patternType().name(), "principal", b.entry().principal(),
                    "host", b.entry().host(), "operation", b.entry().operation().name(),
                    "permission", b.entry().permissionType().name()));
        }
        return out;
    }
}
