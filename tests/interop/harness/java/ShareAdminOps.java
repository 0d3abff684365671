import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.DeleteShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The share-group operations of the {@code admin} command (KIP-932; AdminOps dispatches to them):
 * <pre>
 *   listShareGroups {}  -> groups [{group_id, type, state}]
 *   describeShareGroups {groups: [id]}
 *       -> groups [{group_id, state, group_epoch, assignment_epoch, members: [{member_id, client_id,
 *          member_epoch, assignment: ["topic-p"]}]} | {group_id, error, message}]
 *   listShareGroupOffsets {group}  -> offsets {"topic-p": {start_offset, leader_epoch, lag}}
 *   alterShareGroupOffsets {group, offsets: {"topic-p": start}}
 *       -> partitions {"topic-p": "ok" | {error, message}}, or {error, message} when the whole call fails
 *   deleteShareGroupOffsets {group, topics: [t]}
 *       -> topics {t: "ok" | {error, message}}, or {error, message} when the whole call fails
 * </pre>
 */
final class ShareAdminOps {
    private ShareAdminOps() {}

    static void list(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        Collection<GroupListing> listed = admin.listGroups(ListGroupsOptions.forShareGroups()).all()
                .get(timeout, TimeUnit.MILLISECONDS);
        JsonArray groups = new JsonArray();
        for (GroupListing g : listed) {
            groups.add(Json.obj("group_id", g.groupId(), "type", String.valueOf(g.type().orElse(null)),
                    "state", String.valueOf(g.groupState().orElse(null))));
        }
        out.add("groups", groups);
    }

    static void describe(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        List<String> ids = AdminOps.strings(op, "groups");
        Map<String, KafkaFuture<ShareGroupDescription>> got = admin.describeShareGroups(ids).describedGroups();
        JsonArray groups = new JsonArray();
        for (String id : ids) {
            try {
                ShareGroupDescription d = got.get(id).get(timeout, TimeUnit.MILLISECONDS);
                JsonArray members = new JsonArray();
                for (ShareMemberDescription m : d.members()) {
                    List<String> tps = new ArrayList<>();
                    for (TopicPartition tp : KafkaHarness.sorted(m.assignment().topicPartitions())) {
                        tps.add(tp.topic() + "-" + tp.partition());
                    }
                    members.add(Json.obj("member_id", m.consumerId(), "client_id", m.clientId(),
                            "member_epoch", m.memberEpoch(), "assignment", tps));
                }
                groups.add(Json.obj("group_id", id, "state", String.valueOf(d.groupState()),
                        "group_epoch", d.groupEpoch(), "assignment_epoch", d.targetAssignmentEpoch(),
                        "members", members));
            } catch (ExecutionException e) {
                groups.add(Json.withError(Json.obj("group_id", id), e));
            }
        }
        out.add("groups", groups);
    }

    static void offsets(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        String group = Json.requireStr(op, "group");
        Map<TopicPartition, SharePartitionOffsetInfo> got = admin
                .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                .partitionsToOffsetInfo(group).get(timeout, TimeUnit.MILLISECONDS);
        JsonObject offsets = new JsonObject();
        Map<String, SharePartitionOffsetInfo> sorted = new TreeMap<>();
        got.forEach((tp, info) -> sorted.put(tp.topic() + "-" + tp.partition(), info));
        sorted.forEach((k, info) -> offsets.add(k, info == null ? null : Json.obj(
                "start_offset", info.startOffset(), "leader_epoch", info.leaderEpoch().orElse(null),
                "lag", info.lag().orElse(null))));
        out.add("offsets", offsets);
    }

    static void alterOffsets(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        String group = Json.requireStr(op, "group");
        Map<TopicPartition, Long> offsets = new HashMap<>();
        Map<String, TopicPartition> byName = new TreeMap<>();
        Json.object(op, "offsets").entrySet().forEach(e -> {
            int dash = e.getKey().lastIndexOf('-');
            TopicPartition tp = new TopicPartition(e.getKey().substring(0, dash),
                    Integer.parseInt(e.getKey().substring(dash + 1)));
            offsets.put(tp, e.getValue().getAsLong());
            byName.put(e.getKey(), tp);
        });
        AlterShareGroupOffsetsResult result = admin.alterShareGroupOffsets(group, offsets);
        try {
            result.all().get(timeout, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Json.withError(out, e);
        }
        JsonObject partitions = new JsonObject();
        for (Map.Entry<String, TopicPartition> e : byName.entrySet()) {
            try {
                result.partitionResult(e.getValue()).get(timeout, TimeUnit.MILLISECONDS);
                partitions.addProperty(e.getKey(), "ok");
            } catch (ExecutionException ex) {
                partitions.add(e.getKey(), Json.withError(new JsonObject(), ex));
            }
        }
        out.add("partitions", partitions);
    }

    static void deleteOffsets(Admin admin, long timeout, JsonObject op, JsonObject out) throws Exception {
        String group = Json.requireStr(op, "group");
        List<String> names = AdminOps.strings(op, "topics");
        DeleteShareGroupOffsetsResult result = admin.deleteShareGroupOffsets(group, new HashSet<>(names));
        try {
            result.all().get(timeout, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Json.withError(out, e);
        }
        JsonObject topics = new JsonObject();
        for (String name : names) {
            try {
                result.topicResult(name).get(timeout, TimeUnit.MILLISECONDS);
                topics.addProperty(name, "ok");
            } catch (ExecutionException ex) {
                topics.add(name, Json.withError(new JsonObject(), ex));
            }
        }
        out.add("topics", topics);
    }
}
