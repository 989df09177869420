"""The tool runtime: registry, schema checks, approval policies, built-in tools."""
