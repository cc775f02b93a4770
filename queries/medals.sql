-- MLE-bench's medals per model and language, over the MLE-bench competitions: those whose
-- grades carry a medal (their manifest names a Kaggle leaderboard in `[mle_bench]`).
--
-- MLE-bench's definitions (aggregate_reports in mlebench/grade.py): every run counts, and a
-- run that was not executed, failed or graded invalid is a run without a medal, not above
-- the median. runs = the planned and generated samples (every seed; one never generated,
-- executed or graded is a run without a medal, and counts in missing); valid_pct =
-- 100 · runs whose predictions graded valid / runs; above_median_pct, gold_pct, silver_pct and bronze_pct
-- likewise; any_medal_pct = 100 · runs with a medal / runs (a run has one medal at most).
-- competitions counts the MLE-bench competitions among the runs. A model that ran in
-- several languages also has a row 'All' over all its runs.
WITH mle AS (
    SELECT DISTINCT competition FROM grade WHERE medal IS NOT NULL
), r AS (
    SELECT u.model, u.format, u.language, u.language_position, u.competition,
        CASE WHEN u.valid THEN 1 ELSE 0 END AS valid,
        CASE WHEN u.missing_stage IS NULL THEN 0 ELSE 1 END AS missing,
        CASE WHEN g.above_median THEN 1 ELSE 0 END AS above_median,
        coalesce(g.medal, 'none') AS medal
    FROM runs u
    JOIN mle ON mle.competition = u.competition
    LEFT JOIN grade g ON g.event_id = u.grade_id
), per_language AS (
    SELECT model, format, language, min(language_position) AS position,
        count(DISTINCT competition) AS competitions,
        count(*) AS runs,
        sum(valid) AS valid,
        sum(above_median) AS above_median,
        sum(CASE WHEN medal = 'gold' THEN 1 ELSE 0 END) AS gold,
        sum(CASE WHEN medal = 'silver' THEN 1 ELSE 0 END) AS silver,
        sum(CASE WHEN medal = 'bronze' THEN 1 ELSE 0 END) AS bronze,
        sum(missing) AS missing,
        0 AS block
    FROM r
    GROUP BY model, format, language
), overall AS (
    SELECT model, format, 'All' AS language, 1000 AS position,
        count(DISTINCT competition) AS competitions,
        count(*) AS runs,
        sum(valid) AS valid,
        sum(above_median) AS above_median,
        sum(CASE WHEN medal = 'gold' THEN 1 ELSE 0 END) AS gold,
        sum(CASE WHEN medal = 'silver' THEN 1 ELSE 0 END) AS silver,
        sum(CASE WHEN medal = 'bronze' THEN 1 ELSE 0 END) AS bronze,
        sum(missing) AS missing,
        1 AS block
    FROM r
    GROUP BY model, format
    HAVING count(DISTINCT language) > 1
)
SELECT model, format, language, competitions, runs,
    100.0 * valid / runs AS valid_pct,
    100.0 * above_median / runs AS above_median_pct,
    100.0 * gold / runs AS gold_pct,
    100.0 * silver / runs AS silver_pct,
    100.0 * bronze / runs AS bronze_pct,
    100.0 * (gold + silver + bronze) / runs AS any_medal_pct,
    missing
FROM (SELECT * FROM per_language UNION ALL SELECT * FROM overall) t
ORDER BY model, format, block, position, language
