"""Plain shared value types: the records every layer passes around and shows, with no I/O and nothing above.

Every layer may import this package, and it imports nothing of the app but `server_text` (the contract
"values are the bottom layer" in pyproject.toml). A type belongs here when the front ends show it and a core
package makes it; what reads, writes, signs in or connects stays in its package, behind the `tenant/` facade.
Import from the modules: this file stays empty.
"""
