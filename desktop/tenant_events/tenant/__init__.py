"""One tenant as this machine follows it (`link.TenantLink`): the facade `ui/` and `cli/` use.

Import from the modules (`tenant_events.tenant.link`, `.database`, `.sign_in`): this file stays empty so that
the command line's `--help` does not load the stream, the store and the HTTP library.
"""
