-- runs: one row per generated sample, joined with its execution and its grade.
--
-- Grain: (model, format, competition, language, seed), where a model searched by the aide
-- agent is its own entrant, `<model>+aide` (like the paper's "AIDE (o4-mini)"; the react
-- agent's, `<model>+react`), so its
-- samples never replace the model's one-shot ones. The latest committed event wins
-- where a log holds several for the same thing (a regenerated sample, a re-execution, a
-- regrade after an answers file changed): latest by created_at, ties broken by event_id.
-- A sample that was not executed or not graded yet has outcome 'not_executed' / valid
-- false / r_p 0, as ML2B counts a missing run; a valid run of a competition without a
-- baseline has r_p NULL (the aggregates skip it).
--
-- Every planned sample is a row: a sample of the `planned` log (what generate set out to
-- produce, recorded before it ran) with no generate event has outcome 'not_generated',
-- valid false and r_p 0, so it stays in every denominator. missing_stage says where a
-- sample's chain stops short of a verdict: 'generate' (never generated), 'execute' (never
-- executed, or its run is a sandbox_error an earlier ml2b recorded: the sandbox, not the
-- code, failed), 'grade' (never graded); NULL for a complete sample. The `fault` log says
-- why. A store written before ml2b recorded plans has no planned rows, and its other
-- columns read as they always did. r_p is against the reference solution,
-- r_p_automl against the algorithmic baseline (AutoGluon), each as the grade recorded it.
-- Execute runs identical code once, so every
-- sample that produced the same code shares one execution and one grade.
--
-- "Latest" per key is split in two. The keys with one event (nearly all) take that event
-- as it is; only the others go through last_value(… ORDER BY created_at, event_id), whose
-- per-group ordering state is the costly part (0.5–1 s per column at 1,000,000 events).
-- The repeated keys are the view repeated_keys: the key_hash (a UInt64) of every key that
-- several events share (its key expressions and these must stay the same). A row whose
-- hash is not listed is the one event of its key; every row whose hash is listed takes the
-- exact path, grouped on the key columns themselves (a hash collision there only costs
-- time). Each join is written with the short list on the left, so that it is the hashed
-- (build) side; when the list is empty, the exact path does not even read the log.
-- Booleans go through TINYINT in last_value: DataFusion's grouped fast path takes numbers
-- and text only.
--
-- The three logs meet in two hash joins as long as the logs, each hashing its left side.
-- An execution meets its grade first (xg: a grade's key is its execution's id, so a query
-- that reads neither id carries no id past it), then the samples meet xg by code. For the
-- tables' columns both left sides are the narrower side, so the hash tables hold fewer
-- bytes than (samples ⋈ executions) ⋈ grades, whose ids travel through both joins
-- (measured in benches/analyze.rs: the two joins went from 1.5 s to 0.8 s at 1,000,000).
WITH gen AS (
    SELECT model, format, competition, language, seed, event_id, created_at, code_blake3,
        input_tokens, output_tokens, cost_usd,
        key_hash(model, format, competition, language, seed) AS h
    FROM (
        SELECT CASE WHEN agent IN ('aide', 'react') THEN model || '+' || agent
            WHEN agent = 'external' THEN model || '+' || coalesce(agent_name, 'external') ELSE model END AS model,
            format, competition, language, seed, event_id, created_at,
            code_blake3, input_tokens, output_tokens, cost_usd
        FROM generate
    )
), gen_repeated AS (
    SELECT h FROM repeated_keys WHERE log = 'generate'
), g AS (
    SELECT model, format, competition, language, seed, event_id, code_blake3,
        input_tokens, output_tokens, cost_usd
    FROM gen_repeated RIGHT ANTI JOIN gen USING (h)
    UNION ALL
    SELECT model, format, competition, language, seed,
        last_value(event_id ORDER BY created_at, event_id),
        last_value(code_blake3 ORDER BY created_at, event_id),
        last_value(input_tokens ORDER BY created_at, event_id),
        last_value(output_tokens ORDER BY created_at, event_id),
        last_value(cost_usd ORDER BY created_at, event_id)
    FROM gen_repeated RIGHT SEMI JOIN gen USING (h)
    GROUP BY model, format, competition, language, seed
), exe AS (
    SELECT competition, format, code_blake3, event_id, created_at, outcome, leakage,
        findings, wall_seconds, key_hash(competition, format, code_blake3) AS h
    FROM execute
), execute_repeated AS (
    SELECT h FROM repeated_keys WHERE log = 'execute'
), x AS (
    SELECT competition, format, code_blake3, event_id, outcome, leakage, findings, wall_seconds
    FROM execute_repeated RIGHT ANTI JOIN exe USING (h)
    UNION ALL
    SELECT competition, format, code_blake3,
        last_value(event_id ORDER BY created_at, event_id),
        last_value(outcome ORDER BY created_at, event_id),
        last_value(CAST(leakage AS TINYINT) ORDER BY created_at, event_id) = 1,
        last_value(findings ORDER BY created_at, event_id),
        last_value(wall_seconds ORDER BY created_at, event_id)
    FROM execute_repeated RIGHT SEMI JOIN exe USING (h)
    GROUP BY competition, format, code_blake3
), grades AS (
    SELECT execution_id, event_id, created_at, valid, score, metric, direction, r_p,
        r_p_automl, key_hash(execution_id) AS h
    FROM (
        SELECT array_element(upstream, 1) AS execution_id, event_id, created_at, valid,
            score, metric, direction, r_p, r_p_automl
        FROM grade
    )
), grade_repeated AS (
    SELECT h FROM repeated_keys WHERE log = 'grade'
), gr AS (
    SELECT execution_id, event_id, valid, score, metric, direction, r_p, r_p_automl
    FROM grade_repeated RIGHT ANTI JOIN grades USING (h)
    UNION ALL
    SELECT execution_id,
        last_value(event_id ORDER BY created_at, event_id),
        last_value(CAST(valid AS TINYINT) ORDER BY created_at, event_id) = 1,
        last_value(score ORDER BY created_at, event_id),
        last_value(metric ORDER BY created_at, event_id),
        last_value(direction ORDER BY created_at, event_id),
        last_value(r_p ORDER BY created_at, event_id),
        last_value(r_p_automl ORDER BY created_at, event_id)
    FROM grade_repeated RIGHT SEMI JOIN grades USING (h)
    GROUP BY execution_id
), never AS (
    SELECT p.model, p.format, p.competition, p.language, p.seed
    FROM (
        SELECT DISTINCT
            CASE WHEN agent IN ('aide', 'react') THEN model || '+' || agent
            WHEN agent = 'external' THEN model || '+' || coalesce(agent_name, 'external') ELSE model END AS model,
            format, competition, language, seed
        FROM planned
    ) p
    LEFT ANTI JOIN gen ON gen.model = p.model AND gen.format = p.format
        AND gen.competition = p.competition AND gen.language = p.language AND gen.seed = p.seed
), xg AS (
    SELECT x.competition, x.format, x.code_blake3, x.event_id AS execution_id, x.outcome,
        x.leakage, x.findings, x.wall_seconds, gr.event_id AS grade_id, gr.valid, gr.score,
        gr.metric, gr.direction, gr.r_p, gr.r_p_automl
    FROM gr RIGHT JOIN x ON gr.execution_id = x.event_id
)
SELECT
    g.model, g.format, g.competition, g.language, l.tier, l.position AS language_position,
    g.seed, g.event_id AS generation_id, g.code_blake3,
    g.input_tokens, g.output_tokens, g.cost_usd,
    xg.execution_id,
    coalesce(xg.outcome, 'not_executed') AS outcome,
    coalesce(xg.leakage, false) AS leakage,
    xg.findings, xg.wall_seconds,
    xg.grade_id,
    coalesce(xg.valid, false) AS valid,
    xg.score, xg.metric, xg.direction,
    CASE WHEN coalesce(xg.valid, false) THEN xg.r_p ELSE 0.0 END AS r_p,
    CASE WHEN coalesce(xg.valid, false) THEN xg.r_p_automl ELSE 0.0 END AS r_p_automl,
    CASE
        WHEN xg.execution_id IS NULL OR xg.outcome = 'sandbox_error' THEN 'execute'
        WHEN xg.grade_id IS NULL THEN 'grade'
    END AS missing_stage
FROM xg
RIGHT JOIN g ON xg.competition = g.competition AND xg.format = g.format
    AND xg.code_blake3 = g.code_blake3
LEFT JOIN languages l ON l.code = g.language
UNION ALL
SELECT
    n.model, n.format, n.competition, n.language, l.tier, l.position AS language_position,
    n.seed, arrow_cast(NULL, 'Utf8') AS generation_id, arrow_cast(NULL, 'Utf8') AS code_blake3,
    arrow_cast(NULL, 'UInt64') AS input_tokens, arrow_cast(NULL, 'UInt64') AS output_tokens,
    arrow_cast(NULL, 'Float64') AS cost_usd,
    arrow_cast(NULL, 'Utf8') AS execution_id,
    'not_generated' AS outcome,
    false AS leakage,
    arrow_cast(NULL, 'Utf8') AS findings, arrow_cast(NULL, 'Float64') AS wall_seconds,
    arrow_cast(NULL, 'Utf8') AS grade_id,
    false AS valid,
    arrow_cast(NULL, 'Float64') AS score, arrow_cast(NULL, 'Utf8') AS metric,
    arrow_cast(NULL, 'Utf8') AS direction,
    0.0 AS r_p,
    0.0 AS r_p_automl,
    'generate' AS missing_stage
FROM never n
LEFT JOIN languages l ON l.code = n.language
