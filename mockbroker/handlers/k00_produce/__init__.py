"""Produce (key 0): handler.py serves it (versions, behaviour, authorization, error answer);
delayed_produce.py is its acks=all wait for the ISR (Kafka's DelayedProduce)."""
