import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
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
}
