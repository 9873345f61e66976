"""The sandbox runtime: each sandbox a folder and a process tree in bubblewrap, started by its agent;
its confined paths, accounts and file watches.

It stands on `state/`, `http/` and `wire/`, never on an API (`control/`, `dataplane/`).
"""
