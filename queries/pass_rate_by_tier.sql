-- Pass rate per model and resource tier (high / medium / low): 100 · valid runs /
-- (cells · seeds) over all the tier's languages; missing: the planned samples with no
-- verdict yet, which fail.
SELECT model, format, tier, count(DISTINCT language) AS languages,
    100.0 * sum(passed) / sum(seeds) AS pass_rate,
    sum(missing) AS missing
FROM cells
GROUP BY model, format, tier
ORDER BY model, format, CASE tier WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END
