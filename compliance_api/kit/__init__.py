"""Domain-free building blocks (clock, environments, pagination, group commit, batch writer, patterns, schemas,
deprecation, file values): they import no domain package, only the database and error plumbing."""
