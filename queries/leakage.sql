-- Leakage findings per model: runs whose code the static leakage detector flagged
-- (preprocessing fitted on validation data, train/validation overlap, no independent
-- test data; `ml2b check`), and their share.
SELECT model, format, count(*) AS runs,
    sum(CASE WHEN leakage THEN 1 ELSE 0 END) AS flagged,
    100.0 * sum(CASE WHEN leakage THEN 1 ELSE 0 END) / count(*) AS flagged_pct
FROM runs
GROUP BY model, format
ORDER BY model, format
