"""The one compiled part of Tenant Events: the archive writer's full-text postings, pairs of words and field rows
(store/_postings.c and the files it is built with), built against the system's SQLite, whose FTS5 tokenizer it
calls. Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "tenant_events.store._postings",
            [
                f"desktop/tenant_events/store/{name}.c"
                for name in (
                    "_postings",
                    "term_lists",
                    "pair_lists",
                    "field_lists",
                    "event_values",
                    "field_scan",
                )
            ],
            depends=[f"desktop/tenant_events/store/{name}.h" for name in ("term_lists", "event_values")],
            libraries=["sqlite3"],
            extra_compile_args=["-O3", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
        )
    ]
)
