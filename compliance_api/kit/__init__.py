"""Domain-free building blocks (clock, environments, pagination, group commit, batch writer, patterns, schemas,
deprecation, import files read row by row and their values): they import no domain package, only the database and
error plumbing."""
