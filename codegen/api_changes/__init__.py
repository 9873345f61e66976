"""What changed between two specs, as SDK users see it: the comparison, its rules table and its report.

Modules other parts of codegen may import (the rest are this folder's own):

- `compare`: compare_specs and the RULES table (docs/maintainers/bump.md's classification table)
- `report`: the report's data and its Markdown
- `generated_names`: the class names the generated client has for each place in a spec, and where
  the generator's parser's answers are remembered (`parser_records`)

Internal:

- `client_parser`: those names and the response's fields, from openapi-python-client's parser
"""

__all__ = ["compare", "generated_names", "report"]
