-- The AI agent (docs/ai-agent.md): its behaviour beside the bot's settings, the knowledge it answers from (FAQ
-- answers and articles split into passages, searched with PostgreSQL's full-text search in the workspace's
-- language), the pricing sheets it quotes from through its quote_price tool, and every model call with its tokens,
-- cost and what grounded the reply it produced.

ALTER TABLE bot_settings
    ADD COLUMN system_prompt   text NOT NULL DEFAULT '',
    ADD COLUMN tone            text NOT NULL DEFAULT 'friendly',
    ADD COLUMN answer_length   text NOT NULL DEFAULT 'short',
    -- Answer in the language the customer wrote in (else in the knowledge's language).
    ADD COLUMN customer_language boolean NOT NULL DEFAULT true,
    -- The text search configuration the knowledge is stemmed with (pg_ts_config's names: english, german, ...).
    ADD COLUMN language        regconfig NOT NULL DEFAULT 'english',
    -- '' : the service's default model (INBOX_MODEL).
    ADD COLUMN model           text NOT NULL DEFAULT '',
    ADD COLUMN temperature     real NOT NULL DEFAULT 0.2,
    -- Bot replies in a row (no person in between) after which the next customer message goes to a person.
    ADD COLUMN max_bot_turns   integer NOT NULL DEFAULT 6,
    -- The model cost, in millionths of a US dollar, the agent may spend in a calendar month (UTC); NULL: no limit.
    ADD COLUMN monthly_budget_micros bigint;

-- An FAQ answer's words: its keywords and its answer. array_to_string is only STABLE (an element type's output
-- function may be), which a generated column refuses; for text[] it is immutable.
CREATE FUNCTION bot_answer_words(keywords text[], answer text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT array_to_string(keywords, ' ') || ' ' || answer $$;

-- An FAQ answer is knowledge too: searched with its keywords, stemmed in the workspace's language.
ALTER TABLE bot_answers
    ADD COLUMN language regconfig NOT NULL DEFAULT 'english',
    ADD COLUMN search tsvector GENERATED ALWAYS AS
        (to_tsvector(language, bot_answer_words(keywords, answer))) STORED;
CREATE INDEX bot_answers_search ON bot_answers USING gin (search);

CREATE TABLE ai_articles (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    title        text NOT NULL,
    body         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    updated_by   bigint REFERENCES members (id)
);
CREATE INDEX ai_articles_workspace ON ai_articles (workspace_id, id);

-- An article's passages (its body split at headings and paragraphs), the unit retrieval ranks and cites.
CREATE TABLE ai_passages (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    article_id   bigint NOT NULL REFERENCES ai_articles (id) ON DELETE CASCADE,
    position     integer NOT NULL,
    heading      text NOT NULL DEFAULT '',
    text         text NOT NULL,
    language     regconfig NOT NULL DEFAULT 'english',
    search       tsvector GENERATED ALWAYS AS
        (setweight(to_tsvector(language, heading), 'A') || to_tsvector(language, text)) STORED,
    UNIQUE (article_id, position)
);
CREATE INDEX ai_passages_search ON ai_passages USING gin (search);
CREATE INDEX ai_passages_workspace ON ai_passages (workspace_id);

CREATE TABLE pricing_sheets (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    name         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    updated_by   bigint REFERENCES members (id)
);
CREATE UNIQUE INDEX pricing_sheets_name ON pricing_sheets (workspace_id, lower(name));

CREATE TABLE pricing_items (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    sheet_id     bigint NOT NULL REFERENCES pricing_sheets (id) ON DELETE CASCADE,
    name         text NOT NULL,
    price        numeric(14, 4) NOT NULL CHECK (price >= 0),
    currency     text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    unit         text NOT NULL DEFAULT '',
    valid_from   date,
    valid_until  date,
    notes        text NOT NULL DEFAULT '',
    search       tsvector GENERATED ALWAYS AS
        (setweight(to_tsvector('simple', name), 'A') || to_tsvector('simple', notes)) STORED,
    CHECK (valid_until IS NULL OR valid_from IS NULL OR valid_until >= valid_from)
);
CREATE INDEX pricing_items_sheet ON pricing_items (sheet_id, id);
CREATE INDEX pricing_items_search ON pricing_items USING gin (search);

-- Every call to a language model: who it was for, what it cost, how it ended, and for the call whose answer was
-- sent, the message and what grounded it (passages, FAQ answers and price rows).
CREATE TABLE ai_model_calls (
    id                bigserial PRIMARY KEY,
    workspace_id      bigint NOT NULL REFERENCES workspaces (id),
    conversation_id   bigint REFERENCES conversations (id) ON DELETE CASCADE,
    message_id        bigint REFERENCES messages (id) ON DELETE SET NULL,
    model             text NOT NULL,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    latency_ms        integer NOT NULL DEFAULT 0,
    -- answered, handed_off, quoted, guardrail, failed, timed_out, cancelled, trial
    outcome           text NOT NULL,
    cost_micros       bigint NOT NULL DEFAULT 0,
    grounding         jsonb,
    at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_model_calls_window ON ai_model_calls (workspace_id, at);
CREATE INDEX ai_model_calls_message ON ai_model_calls (message_id) WHERE message_id IS NOT NULL;
