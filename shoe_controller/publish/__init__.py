"""Events out: the durable MQTT outbox, topics, payloads and their schemas.

- ``config``: ``[mqtt]`` and ``[journal]`` settings (import-light msgspec Structs)
- ``release``: which journaled events may leave now (pure; ``on_result`` / ``per_card``)
- ``payloads``: the signed casino envelope, status and display payloads
- ``topics``: the topic names of a table
- ``outbox``: the outbox table in the journal's SQLite file
- ``sender``: outbox rows to the broker, deleted on PUBACK
- ``mqtt``: the paho-mqtt 2.x MQTT 5 connection (TLS, credentials, last will)
- ``publisher``: what the daemon calls (``append`` / ``submit`` / ``flush`` / ``pending``)
- ``schemagen``: writes ``schemas/`` from the game core's event Structs
- ``probe``: latency measurement helpers for benchmarks

See docs/mqtt.md.
"""
