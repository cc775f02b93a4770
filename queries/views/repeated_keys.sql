-- repeated_keys: the keys that several events of a log share, as the runs view finds them.
--
-- One row per (log, h), where h is the key_hash of the key the runs view takes the latest
-- event of: (model or <model>+aide / +react, format, competition, language, seed) in generate,
-- (competition, format, code_blake3) in execute, the graded execution's id in grade. A key
-- whose hash is not listed has exactly one event. Nearly every key has one event, so the
-- list is short (empty when nothing was regenerated, re-executed or regraded); it is a view
-- of its own so that its counts, 1,000,000 groups a log at 1,000,000 runs, are computed
-- once per session although runs reads each log's list twice. The key expressions here and
-- in runs.sql must stay the same (analyze::the_latest_event_wins_in_every_log fails if
-- they part).
SELECT 'generate' AS log, h
FROM (
    SELECT key_hash(CASE WHEN agent IN ('aide', 'react') THEN model || '+' || agent
            WHEN agent = 'external' THEN model || '+' || coalesce(agent_name, 'external') ELSE model END,
        format, competition, language, seed) AS h
    FROM generate
)
GROUP BY h HAVING count(*) > 1
UNION ALL
SELECT 'execute' AS log, h
FROM (SELECT key_hash(competition, format, code_blake3) AS h FROM execute)
GROUP BY h HAVING count(*) > 1
UNION ALL
SELECT 'grade' AS log, h
FROM (SELECT key_hash(array_element(upstream, 1)) AS h FROM grade)
GROUP BY h HAVING count(*) > 1
