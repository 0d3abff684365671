"""What several API handlers share, kept out of the handler modules so that no handler imports another
(tests/test_architecture.py): none of these modules registers an API.

- constants.py: the protocol constants several APIs answer with (authorized-operations bits and "not
  requested", ConfigResource types, Kafka's default error messages);
- brokers.py: the broker list (Metadata, DescribeCluster);
- leader_hints.py: KIP-951 leader hints (Produce, Fetch);
- request_steps.py: the per-request work bound and the work a node carries on (Produce, Fetch);
- group_members.py: parking a group member's request until its coordinator answers, the client host as
  Kafka prints it (JoinGroup, SyncGroup, ConsumerGroupHeartbeat);
- group_authorization.py: the group checks several group APIs share;
- acl_filters.py: an ACL filter read from a request (DescribeAcls, DeleteAcls);
- config_resources.py: altering config resources and their authorization (DescribeConfigs, AlterConfigs,
  IncrementalAlterConfigs).
"""
