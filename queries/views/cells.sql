-- cells: one row per (model, format, competition, language), the unit of every profile.
--
-- r is the cell's performance ratio: the mean of r_p over the model's seeds, a missing
-- seed counting 0 (STATISTICS.md §3.0); seeds = the number of distinct seeds the model
-- generated with anywhere. passed counts valid runs; missing, the planned samples whose
-- chain stops short of a verdict (runs.missing_stage), which count 0 in r like a failure.
-- The short list s is the join's left, hashed side; runs streams past it.
WITH s AS (
    SELECT model, format, count(DISTINCT seed) AS seeds FROM runs GROUP BY model, format
)
SELECT
    r.model, r.format, r.competition, r.language, r.tier, r.language_position,
    stable_sum(r.r_p) / s.seeds AS r,
    count(*) AS runs,
    sum(CASE WHEN r.valid THEN 1 ELSE 0 END) AS passed,
    s.seeds,
    sum(CASE WHEN r.missing_stage IS NULL THEN 0 ELSE 1 END) AS missing
FROM s
JOIN runs r ON r.model = s.model AND r.format = s.format
GROUP BY r.model, r.format, r.competition, r.language, r.tier, r.language_position, s.seeds
