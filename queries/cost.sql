-- Token usage and cost per model: every generate event counts (including samples whose
-- code failed later), priced from manifests/models.toml at generation time. A model
-- searched by an agent is its own entrant, `<model>+aide` or `<model>+react`, as in the
-- runs view, and its event counts every step of the search; a model an external agent
-- asked is `<model>+<agent>` (its name in manifests/agents.toml), and its event counts
-- every request the agent sent through the gateway.
SELECT model, count(*) AS generations,
    sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
    stable_sum(cost_usd) AS cost_usd
FROM (
    SELECT CASE WHEN agent IN ('aide', 'react') THEN model || '+' || agent
            WHEN agent = 'external' THEN model || '+' || coalesce(agent_name, 'external') ELSE model END AS model,
        input_tokens, output_tokens, cost_usd
    FROM generate
)
GROUP BY model
ORDER BY model
