"""What codegen and the release tools both stand on; it imports neither.

- `printable`: text from data made safe for a terminal, and `Say`, where a tool's lines go
- `errors`: problems as values, the exception that carries them, exit statuses, interrupts
- `read`: a file's bytes, never through a symlink
- `changelog`: semver levels and changelog fragment types
- `paths`: every path the tools read or write, and which of them a write may swap
- `transaction`: many files swapped into place as one journaled change, and its recovery
- `cache_folder`: where the tools keep what they remember (never inside the project)
- `records`: remembered answers, each under the digest of what decides it
"""
