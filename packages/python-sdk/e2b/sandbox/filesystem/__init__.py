"""Filesystem types, entry and event decoding, and the shapes of uploads."""
