-- Where a lone fenced write's fence "inserts" (persistence/statement_fence.py, `carried`): a data-modifying CTE is the
-- one part of a statement PostgreSQL always runs, so the fence is called from an INSERT of nothing into this table
-- (no columns, never written, not logged). It makes the write and its fence one round trip instead of three.
CREATE UNLOGGED TABLE inbox_fence_sink ();
