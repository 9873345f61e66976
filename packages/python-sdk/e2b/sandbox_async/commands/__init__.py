"""`sbx.commands` and `sbx.pty`."""
