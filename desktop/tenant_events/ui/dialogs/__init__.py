"""Windows other than the main one: welcome, connect a tenant or a hub, sign in, export, and the small dialogs
the window opens (names, time ranges, shortcuts)."""
