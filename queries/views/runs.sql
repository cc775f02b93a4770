-- runs: one row per generated sample, joined with its execution and its grade.
--
-- Grain: (model, format, competition, language, seed), where a model searched by the aide
-- agent is its own entrant, `<model>+aide` (like the paper's "AIDE (o4-mini)"), so its
-- samples never replace the model's one-shot ones. The latest committed event wins
-- where a log holds several for the same thing (a regenerated sample, a re-execution, a
-- regrade after an answers file changed): latest by created_at, ties broken by event_id.
-- A sample that was not executed or not graded yet has outcome 'not_executed' / valid
-- false / r_p 0, as ML2B counts a missing run; a valid run of a competition without a
-- baseline has r_p NULL (the aggregates skip it). r_p is against the reference solution,
-- r_p_automl against the algorithmic baseline (AutoGluon), each as the grade recorded it.
-- Execute runs identical code once, so every
-- sample that produced the same code shares one execution and one grade.
--
-- "Latest" is an aggregate, last_value(… ORDER BY created_at, event_id) per key, not a
-- row_number() window: a window sorts the whole log (3 s per log at 1,000,000 events),
-- a grouped aggregate hashes it once. Booleans go through TINYINT: DataFusion's
-- last_value has a grouped fast path for numbers and text only (3× slower on booleans).
WITH gen AS (
    SELECT CASE WHEN agent = 'aide' THEN model || '+aide' ELSE model END AS model,
        format, competition, language, seed, event_id, created_at,
        code_blake3, input_tokens, output_tokens, cost_usd
    FROM generate
), g AS (
    SELECT model, format, competition, language, seed,
        last_value(event_id ORDER BY created_at, event_id) AS event_id,
        last_value(code_blake3 ORDER BY created_at, event_id) AS code_blake3,
        last_value(input_tokens ORDER BY created_at, event_id) AS input_tokens,
        last_value(output_tokens ORDER BY created_at, event_id) AS output_tokens,
        last_value(cost_usd ORDER BY created_at, event_id) AS cost_usd
    FROM gen
    GROUP BY model, format, competition, language, seed
), x AS (
    SELECT competition, format, code_blake3,
        last_value(event_id ORDER BY created_at, event_id) AS event_id,
        last_value(outcome ORDER BY created_at, event_id) AS outcome,
        last_value(CAST(leakage AS TINYINT) ORDER BY created_at, event_id) = 1 AS leakage,
        last_value(findings ORDER BY created_at, event_id) AS findings,
        last_value(wall_seconds ORDER BY created_at, event_id) AS wall_seconds
    FROM execute
    GROUP BY competition, format, code_blake3
), gr AS (
    SELECT array_element(upstream, 1) AS execution_id,
        last_value(event_id ORDER BY created_at, event_id) AS event_id,
        last_value(CAST(valid AS TINYINT) ORDER BY created_at, event_id) = 1 AS valid,
        last_value(score ORDER BY created_at, event_id) AS score,
        last_value(metric ORDER BY created_at, event_id) AS metric,
        last_value(direction ORDER BY created_at, event_id) AS direction,
        last_value(r_p ORDER BY created_at, event_id) AS r_p,
        last_value(r_p_automl ORDER BY created_at, event_id) AS r_p_automl
    FROM grade
    GROUP BY array_element(upstream, 1)
)
SELECT
    g.model, g.format, g.competition, g.language, l.tier, l.position AS language_position,
    g.seed, g.event_id AS generation_id, g.code_blake3,
    g.input_tokens, g.output_tokens, g.cost_usd,
    x.event_id AS execution_id,
    coalesce(x.outcome, 'not_executed') AS outcome,
    coalesce(x.leakage, false) AS leakage,
    x.findings, x.wall_seconds,
    gr.event_id AS grade_id,
    coalesce(gr.valid, false) AS valid,
    gr.score, gr.metric, gr.direction,
    CASE WHEN coalesce(gr.valid, false) THEN gr.r_p ELSE 0.0 END AS r_p,
    CASE WHEN coalesce(gr.valid, false) THEN gr.r_p_automl ELSE 0.0 END AS r_p_automl
FROM g
LEFT JOIN x ON x.competition = g.competition AND x.format = g.format
    AND x.code_blake3 = g.code_blake3
LEFT JOIN gr ON gr.execution_id = x.event_id
LEFT JOIN languages l ON l.code = g.language
