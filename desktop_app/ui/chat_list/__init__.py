"""The chat list: its panel, its rows, and what its actions do."""
