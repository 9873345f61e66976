"""The Python API of the packages under packages/, read by griffe and compared: bump's report and api-check.

It stands on toolkit/ alone, so that codegen and release both import it and not each other.

- `distributions`: each package's distribution name and folder (packages/*/pyproject.toml)
- `model`: which names are API, and what a comparison keeps of each (plain data)
- `reader`: griffe's reading of a package's source (imported only when nothing remembers it)
- `compare`: two readings compared (breaks, additions), remembered readings, and the trees they come from
"""
