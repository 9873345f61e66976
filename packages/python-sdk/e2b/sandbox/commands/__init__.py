"""Commands' and terminals' types and the decoding of a process's event stream."""
