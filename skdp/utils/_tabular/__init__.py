"""Implementation of :mod:`skdp.utils.schema` (columns, schema, inference, encoder)."""
