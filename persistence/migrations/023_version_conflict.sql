-- A chat's write that stores something and changes the chat's row in one statement must stand or fall whole. Run
-- alone (no BEGIN, no COMMIT: one statement is its own transaction), it calls this when the row's version moved
-- after the statement had written something else: the error undoes the whole statement, and the writer, told
-- SQLSTATE IA409, reloads the chat (persistence/queries/conversations.py, VersionConflict).
CREATE FUNCTION inbox_version_conflict(conversation_id bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'conversation % is no longer at the version its writer read', conversation_id
        USING ERRCODE = 'IA409';
END
$$;
