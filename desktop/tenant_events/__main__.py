"""`python -m tenant_events` runs the same console command as `tenant-events`."""

from tenant_events.cli.main import main

raise SystemExit(main())
