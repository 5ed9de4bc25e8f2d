"""Smart baccarat shoe controller: cards in, tableau decided, events out."""

__version__ = "0.1.0"
