"""A Confluent-compatible Schema Registry beside the broker (issue #30), Avro first.

model.py (SchemaRegistry: subjects, versions, ids, deletes, configs and modes; no I/O), avro.py (parsing on
fastavro, identity, Avro's schema resolution for the compatibility checks), http.py (Confluent's REST API v1
on aiohttp), store.py (its records in the `_schemas` topic, Confluent's formats), rebuild.py (the registry
read back from them), decode.py (records read back through it), runner.py (MockBroker starts and stops it
on its loop, with the topic). Without fastavro (the `registry` extra) importing avro.py raises
MissingExtraError; without aiohttp, importing http.py does.
"""
