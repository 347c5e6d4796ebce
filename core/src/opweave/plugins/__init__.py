"""Plugin machinery: hook markers, the plugin manager, and entry-point loading.

See :mod:`opweave.plugins.hookspecs` for every hook a plugin can implement.
"""

from opweave.plugins.hookspecs import hookimpl, hookspec
from opweave.plugins.manager import (
    DISABLE_AUTOLOAD_ENV,
    ENTRY_POINT_GROUP,
    OpweavePluginManager,
    PluginRecord,
    PluginWarning,
    create_plugin_manager,
    get_plugin_manager,
    use_plugin_manager,
)

__all__ = [
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "OpweavePluginManager",
    "PluginRecord",
    "PluginWarning",
    "create_plugin_manager",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "use_plugin_manager",
]
