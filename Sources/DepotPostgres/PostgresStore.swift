/// DepotPostgres: the PostgreSQL store (issue #4, in progress).
public enum DepotPostgres {}
