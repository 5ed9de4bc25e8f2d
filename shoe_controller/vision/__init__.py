"""Frames in, card reads out: camera sources, index and barcode readers, pass tracking."""
