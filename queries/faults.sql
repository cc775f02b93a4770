-- Faults that left samples without a verdict: the `fault` log's failures of units still
-- uncommitted (a unit committed since, by a later run, is no longer listed).
--
-- A fault is the environment's, never the model's: a provider that failed or refused after
-- every retry, a sandbox or a grader that could not start, a data file that is not what its
-- manifest records. Grouped by stage and message: units = the distinct units whose latest
-- fault it is; example = one of their labels (competition/language/format/seed for
-- generate, competition/format/code for execute and grade); model = the model, where the
-- unit is a generate unit of the recorded plan.
WITH open AS (
    SELECT stage, unit, label, message, created_at, event_id FROM fault
    WHERE stage = 'generate' AND unit NOT IN (SELECT unit_key FROM generate)
    UNION ALL
    SELECT stage, unit, label, message, created_at, event_id FROM fault
    WHERE stage = 'execute' AND unit NOT IN (SELECT unit_key FROM execute)
    UNION ALL
    SELECT stage, unit, label, message, created_at, event_id FROM fault
    WHERE stage = 'grade' AND unit NOT IN (SELECT unit_key FROM grade)
), latest AS (
    SELECT stage, unit,
        last_value(label ORDER BY created_at, event_id) AS label,
        last_value(message ORDER BY created_at, event_id) AS message
    FROM open
    GROUP BY stage, unit
), named AS (
    SELECT l.stage, l.label, l.message,
        CASE WHEN p.agent IN ('aide', 'react') THEN p.model || '+' || p.agent
            WHEN p.agent = 'external' THEN p.model || '+' || coalesce(p.agent_name, 'external') ELSE p.model END AS model
    FROM latest l
    LEFT JOIN planned p ON p.generate_key = l.unit
)
SELECT stage, model, message, count(*) AS units, min(label) AS example
FROM named
GROUP BY stage, model, message
ORDER BY CASE stage WHEN 'generate' THEN 0 WHEN 'execute' THEN 1 ELSE 2 END, model, units DESC, message
