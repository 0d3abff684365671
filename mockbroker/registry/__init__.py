"""A Confluent-compatible Schema Registry beside the broker (issue #30): Avro, JSON Schema and Protobuf.

model.py (SchemaRegistry: subjects, versions, ids, deletes, configs and modes; no I/O), schemas.py (the
schema types side by side), avro.py (parsing on fastavro, identity, Avro's schema resolution for the
compatibility checks), json_schema.py (jsonschema's meta-schema check, Confluent's JSON Schema diff),
protobuf.py (protoc from grpcio-tools, descriptors, Confluent's Protobuf diff), http.py (Confluent's REST API v1
on aiohttp), store.py (its records in the `_schemas` topic, Confluent's formats), rebuild.py (the registry
read back from them), decode.py (records read back through it), runner.py (MockBroker starts and stops it
on its loop, with the topic). Without fastavro (the `registry` extra) importing avro.py raises
MissingExtraError; without aiohttp, importing http.py does; JSON and PROTOBUF schemas without jsonschema,
protobuf or grpcio-tools are refused with 42201 naming the extra.
"""
