"""A project: its page and the editor the Project dialog shares."""
