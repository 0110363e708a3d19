"""Access review: who held which access at a moment, and what changed between two (Qt-free; the CLI's `access`
and the window's Access view use it). The history it reads is kept by store/access_history.py; docs/access-review.md
says what the answers mean."""
