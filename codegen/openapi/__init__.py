"""Reading and walking OpenAPI documents: untrusted YAML, JSON pointers, validation, operations, the SDK filter.

- `document`: spec bytes -> a validated document (`ref_chains`, where `$ref` chains lead, is its own)
- `error_codes`: the error codes a spec documents
- `json_pointer`: RFC 6901 pointers
- `operation_map`: spec/operations.yml: this repository's names for operations
- `operations`: one set of HTTP methods, one way to walk operations
- `plain_yaml`: untrusted YAML -> plain data with line numbers
- `schema_places`: how far the schemas below the operations unfold, and the budget every walk of them keeps
- `sdk_filter`: the spec cut down to what the SDK exposes
"""

__all__ = [
    "document",
    "error_codes",
    "json_pointer",
    "operation_map",
    "operations",
    "plain_yaml",
    "schema_places",
    "sdk_filter",
]
