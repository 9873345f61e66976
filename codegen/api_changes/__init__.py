"""What changed between two specs, as SDK users see it: the comparison, its rules table and its report.

Modules other parts of codegen may import (the rest are this folder's own):

- `compare`: compare_specs and the RULES table (docs/maintainers/bump.md's classification table)
- `report`: the report's data and its Markdown

Internal:

- `generated_names`: the class names openapi-python-client gives each place in a spec (compare's helper)
"""

__all__ = ["compare", "report"]
