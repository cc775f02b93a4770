-- Completeness per model: every planned sample and how many still have no verdict.
--
-- planned counts every row of runs (the samples generate planned, and any generated without
-- a recorded plan); complete, those executed and graded; missing, the others, by the stage
-- where each stops (runs.missing_stage): never generated (the provider failed after every
-- retry, or the run stopped first), never executed (the sandbox could not start it), never
-- graded. A missing sample is in every denominator of the other tables and fails there;
-- any missing sample makes the tables incomplete, and `ml2b report` and `ml2b run` then
-- say so and exit 1 unless told to accept it (`--accept-incomplete`). The faults table
-- says why each is missing.
SELECT model, format, count(*) AS planned,
    sum(CASE WHEN missing_stage IS NULL THEN 1 ELSE 0 END) AS complete,
    sum(CASE WHEN missing_stage IS NULL THEN 0 ELSE 1 END) AS missing,
    sum(CASE WHEN missing_stage = 'generate' THEN 1 ELSE 0 END) AS not_generated,
    sum(CASE WHEN missing_stage = 'execute' THEN 1 ELSE 0 END) AS not_executed,
    sum(CASE WHEN missing_stage = 'grade' THEN 1 ELSE 0 END) AS not_graded
FROM runs
GROUP BY model, format
ORDER BY model, format
