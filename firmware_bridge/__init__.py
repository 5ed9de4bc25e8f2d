"""The serial link to the shoe's microcontroller: framing, messages, link, simulator."""
