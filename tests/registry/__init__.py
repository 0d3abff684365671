"""The Schema Registry beside the broker (mockbroker/registry): the model, Avro compatibility, the REST API."""
