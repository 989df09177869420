"""The database's schema version, alone: the window's first frame lists the chats only
from a database of this version (`chats/first_frame.py`), before the store and its
migrations load. `storage/db.py` has one migration for each step and refuses to load
when the two disagree."""

SCHEMA_VERSION = 21  # raised with each migration added to `db.MIGRATIONS`
