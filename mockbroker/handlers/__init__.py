"""One module per API key (kNN_name.py); each registers itself with mockbroker.dispatch.handler."""
