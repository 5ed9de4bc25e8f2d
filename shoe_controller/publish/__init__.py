"""Events out: the durable MQTT outbox, topics, payloads and their schemas."""
