-- Each workspace's model cost by calendar month (UTC), kept as calls are recorded: the agent checks its monthly
-- budget on every turn, which summing the month's calls would make slower as the month goes on.
CREATE TABLE ai_monthly_spend (
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    month        date NOT NULL,
    cost_micros  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, month)
);
INSERT INTO ai_monthly_spend (workspace_id, month, cost_micros)
SELECT workspace_id, date_trunc('month', at AT TIME ZONE 'UTC')::date, sum(cost_micros)
FROM ai_model_calls GROUP BY 1, 2;
