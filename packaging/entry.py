"""PyInstaller entry point: the frozen `TenantEvents` binary is the `tenant-events` command."""

import sys

from tenant_events.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
