-- Pass rate per model × language, with the average over languages ('Avg.').
--
-- pass_rate = 100 · valid runs / (cells · seeds): a run passes when it executed `ok` and
-- its predictions graded valid; a missing seed fails. 'Avg.' is the plain mean over the
-- model's languages, as in the paper. missing: the planned samples with no verdict yet
-- (never generated, executed or graded: a fault of the environment, or a run not
-- finished); they are in `expected` and fail, and a table with any is incomplete.
WITH per_language AS (
    SELECT model, format, language, min(language_position) AS position,
        count(*) AS competitions,
        sum(passed) AS passed,
        sum(seeds) AS expected,
        100.0 * sum(passed) / sum(seeds) AS pass_rate,
        sum(missing) AS missing
    FROM cells
    GROUP BY model, format, language
)
SELECT model, format, language, competitions, passed, expected, pass_rate, missing
FROM (
    SELECT *, 0 AS block FROM per_language
    UNION ALL
    SELECT model, format, 'Avg.' AS language, 1000 AS position,
        sum(competitions) AS competitions, sum(passed) AS passed, sum(expected) AS expected,
        stable_avg(pass_rate) AS pass_rate, sum(missing) AS missing, 1 AS block
    FROM per_language
    GROUP BY model, format
) t
ORDER BY model, format, block, position, language
