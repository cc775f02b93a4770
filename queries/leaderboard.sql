-- The leaderboard: every entrant side by side, over all languages ('All'), per resource
-- tier ('high', 'medium', 'low') and per language, each metric a mean over seeds with its
-- standard error and 95% interval, aggregated as MLE-bench aggregates its seeds
-- (experiments/aggregate_grading_reports.py): a metric is computed per seed over every
-- cell of the scope, only the seeds that cover every cell count, then mean, standard error
-- (ddof 1; 0 for one seed) and mean ± 1.96 · SE.
--
-- A scope's cells are the (competition, language) pairs the entrant has any run of in it;
-- a seed covers the scope when it has a run (planned samples included: one never generated,
-- executed or graded is a failure, r = 0) in each. seeds: the complete seeds averaged;
-- seeds_dropped: those that lacked a cell. Per seed: aup = mean over its cells of
-- min(max(r_p, 0), 1), cells without a baseline (r_p NULL) skipped (aup.sql's aup);
-- pass_rate = 100 · valid runs / cells; any_medal = 100 · runs with a medal / cells of
-- MLE-bench competitions (those whose grades carry a medal), NULL where the scope has none.
-- missing: the planned samples of the complete seeds still without a verdict.
WITH mle AS (
    SELECT DISTINCT competition FROM grade WHERE medal IS NOT NULL
), r AS (
    SELECT u.model, u.format, u.competition, u.language, u.tier, u.language_position,
        u.seed, u.r_p,
        CASE WHEN u.valid THEN 1 ELSE 0 END AS valid,
        CASE WHEN u.missing_stage IS NULL THEN 0 ELSE 1 END AS missing,
        CASE WHEN mle.competition IS NULL THEN 0 ELSE 1 END AS mle,
        CASE WHEN g.medal IN ('gold', 'silver', 'bronze') THEN 1 ELSE 0 END AS medal
    FROM runs u
    LEFT JOIN mle ON mle.competition = u.competition
    LEFT JOIN grade g ON g.event_id = u.grade_id
), scoped AS (
    SELECT 'All' AS scope, 0 AS block, 0 AS position, * FROM r
    UNION ALL
    SELECT tier AS scope, 1 AS block,
        CASE tier WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END AS position, * FROM r
    UNION ALL
    SELECT language AS scope, 2 AS block, language_position AS position, * FROM r
), cells AS (
    SELECT model, format, scope, min(block) AS block, min(position) AS position,
        count(DISTINCT competition) AS competitions,
        count(DISTINCT competition || '/' || language) AS cells,
        count(DISTINCT seed) AS all_seeds
    FROM scoped
    GROUP BY model, format, scope
), per_seed AS (
    SELECT model, format, scope, seed,
        count(DISTINCT competition || '/' || language) AS covered,
        coalesce(stable_avg(CASE WHEN r_p IS NULL THEN NULL
            WHEN r_p < 0.0 THEN 0.0 WHEN r_p > 1.0 THEN 1.0 ELSE r_p END), 0.0) AS aup,
        100.0 * sum(valid) / count(*) AS pass_rate,
        CASE WHEN sum(mle) > 0 THEN 100.0 * sum(medal * mle) / sum(mle) END AS any_medal,
        sum(missing) AS missing
    FROM scoped
    GROUP BY model, format, scope, seed
), complete AS (
    SELECT p.*, c.block, c.position, c.competitions, c.cells, c.all_seeds
    FROM per_seed p
    JOIN cells c ON c.model = p.model AND c.format = p.format AND c.scope = p.scope
    WHERE p.covered = c.cells
), agg AS (
    SELECT model, format, scope, min(block) AS block, min(position) AS position,
        min(competitions) AS competitions, min(cells) AS cells,
        count(*) AS seeds, min(all_seeds) - count(*) AS seeds_dropped,
        stable_avg(aup) AS aup,
        CASE WHEN count(*) > 1 THEN sqrt(stable_var_pop(aup) / (count(*) - 1)) ELSE 0.0 END
            AS aup_se,
        stable_avg(pass_rate) AS pass_rate,
        CASE WHEN count(*) > 1 THEN sqrt(stable_var_pop(pass_rate) / (count(*) - 1)) ELSE 0.0 END
            AS pass_rate_se,
        stable_avg(any_medal) AS any_medal,
        CASE WHEN count(any_medal) > 1 THEN sqrt(stable_var_pop(any_medal) / (count(any_medal) - 1))
            WHEN count(any_medal) = 1 THEN 0.0 END AS any_medal_se,
        sum(missing) AS missing
    FROM complete
    GROUP BY model, format, scope
)
SELECT c.model, c.format, c.scope, c.competitions, c.cells,
    coalesce(a.seeds, 0) AS seeds,
    coalesce(a.seeds_dropped, c.all_seeds) AS seeds_dropped,
    a.aup, a.aup_se, a.aup - 1.96 * a.aup_se AS aup_low, a.aup + 1.96 * a.aup_se AS aup_high,
    a.pass_rate, a.pass_rate_se,
    a.pass_rate - 1.96 * a.pass_rate_se AS pass_rate_low,
    a.pass_rate + 1.96 * a.pass_rate_se AS pass_rate_high,
    a.any_medal, a.any_medal_se,
    a.any_medal - 1.96 * a.any_medal_se AS any_medal_low,
    a.any_medal + 1.96 * a.any_medal_se AS any_medal_high,
    coalesce(a.missing, 0) AS missing
FROM cells c
LEFT JOIN agg a ON a.model = c.model AND a.format = c.format AND a.scope = c.scope
ORDER BY c.model, c.format, c.block, c.position, c.scope
