"""`watch_dir`'s handle, at the module path e2b 2.x users import it from.

The two flavours' handles differ (a stream to callbacks, a watcher to poll), so each is written by
hand under `e2b.sandbox`; this module and its twin re-export theirs.
"""

from e2b.sandbox._flavour_async.watch_handle import *  # noqa: F403  # the flavour's module, whole
