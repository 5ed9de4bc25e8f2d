"""The pure game core: cards, tableau, round and shoe state machines, settlement.

Nothing in this package performs I/O, reads a clock or imports hardware, vision or
MQTT libraries; every decision is a plain function over small immutable values.
"""
