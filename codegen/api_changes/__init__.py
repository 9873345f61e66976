"""What changed between two specs, as SDK users see it: the comparison, its rules table and its report.

Modules other parts of codegen may import (the others are this folder's own: `client_parser`, the
generator's parser; `security`, `texts`, `validation`, parts of the comparison):

- `compare`: compare_specs, and the RULES table it applies (`rules`: docs/maintainers/bump.md's table)
- `report`: the report's data and its Markdown
- `generated_names`: the client's class names for each place in a spec (`parser_records` remembers them)
- `envd_files`: the report's section on the envd files a pin adds, removes or changes, graded
- `protos`: compare_protos, two pins' envd protos at the wire (`rules.PROTO_RULES`)
"""

__all__ = ["compare", "envd_files", "generated_names", "protos", "report", "rules"]
