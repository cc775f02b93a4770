-- runs: one row per generated sample, joined with its execution and its grade.
--
-- Grain: (model, format, competition, language, seed). The latest committed event wins
-- where a log holds several for the same thing (a regenerated sample, a re-execution, a
-- regrade after an answers file changed): latest by created_at, ties broken by event_id.
-- A sample that was not executed or not graded yet has outcome 'not_executed' / valid
-- false / r_p 0, as ML2B counts a missing run; a valid run of a competition without a
-- baseline has r_p NULL (the aggregates skip it). Execute runs identical code once, so every
-- sample that produced the same code shares one execution and one grade.
WITH g AS (
    SELECT *, row_number() OVER (
        PARTITION BY model, format, competition, language, seed
        ORDER BY created_at DESC, event_id DESC) AS latest
    FROM generate
), x AS (
    SELECT *, row_number() OVER (
        PARTITION BY competition, format, code_blake3
        ORDER BY created_at DESC, event_id DESC) AS latest
    FROM execute
), gr AS (
    SELECT *, array_element(upstream, 1) AS execution_id, row_number() OVER (
        PARTITION BY array_element(upstream, 1)
        ORDER BY created_at DESC, event_id DESC) AS latest
    FROM grade
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
    CASE WHEN coalesce(gr.valid, false) THEN gr.r_p ELSE 0.0 END AS r_p
FROM g
LEFT JOIN x ON x.latest = 1 AND x.competition = g.competition AND x.format = g.format
    AND x.code_blake3 = g.code_blake3
LEFT JOIN gr ON gr.latest = 1 AND gr.execution_id = x.event_id
LEFT JOIN languages l ON l.code = g.language
WHERE g.latest = 1
