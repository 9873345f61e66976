"""Releasing the packages under packages/: `python -m release <verb>` (nox -s release, changelog-check, release-tag).

Fragments (towncrier's format, one `changelog.d/` per package) decide each
package's next version; `release` writes versions, bounds and changelogs in
one all-or-nothing step after the wheels were built and smoke-tested in a
scratch copy; `release-tag` rebuilds one package from its tag for publishing.
"""
