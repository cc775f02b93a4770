-- Token usage and cost per model: every generate event counts (including samples whose
-- code failed later), priced from manifests/models.toml at generation time.
SELECT model, count(*) AS generations,
    sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
    stable_sum(cost_usd) AS cost_usd
FROM generate
GROUP BY model
ORDER BY model
