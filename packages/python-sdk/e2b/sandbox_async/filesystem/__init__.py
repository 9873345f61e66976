"""`sbx.files`."""
