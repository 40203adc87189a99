-- Signing in to the web app with an email and a password. A member's password is kept only as its argon2id hash
-- (the PHC string, which carries its own salt and parameters, so a later change of parameters needs no column);
-- NULL: never set, and no password signs that member in.
ALTER TABLE members ADD COLUMN password_hash text;

-- Sign-in looks a member up by email across workspaces (one person may belong to several); members_email is
-- keyed by workspace first, so it cannot answer that.
CREATE INDEX members_email_sign_in ON members (lower(email)) WHERE email IS NOT NULL;

-- One-time links to set a password (a new member's first, or a forgotten one's replacement), kept by SHA-256 only
-- (the link is shown once). A link works once and until it expires; issuing a new one revokes the member's earlier
-- unused ones (their expires_at brought forward to that moment), so only the latest link sent works. created_by
-- names who issued it (operator, member:<id>).
CREATE TABLE member_invites (
    id          bigserial PRIMARY KEY,
    member_id   bigint NOT NULL REFERENCES members (id),
    token_hash  bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,                       -- when the password was set through it
    created_by  text NOT NULL
);
CREATE INDEX member_invites_unused ON member_invites (member_id) WHERE used_at IS NULL;
