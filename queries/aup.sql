-- AUP per model × language in ml2b's convention, with pass rate: the paper's
-- "AUP / PR" table (STATISTICS.md §3.0), and the average over languages ('Avg.').
--
-- aup = mean over competitions of min(r, 1); aup_ln = AUP_{−ln τ}; aup_invln =
-- AUP_{−1/ln τ} on trapezoid(linspace(1e-8, 1−1e-8, 1000)), which is ≈ the share of
-- cells with r ≥ 1; win_rate = 100 · share of cells with r ≥ 1; pass_rate as in
-- pass_rate.sql. 'Avg.' is the plain mean of each column over the model's languages.
-- missing: the planned samples with no verdict yet (pass_rate.sql), counted as failures
-- (r = 0) in every column; 'Avg.' sums them.
WITH per_language AS (
    SELECT model, format, language, min(language_position) AS position,
        count(*) AS competitions,
        aup(r) AS aup, aup_ln(r) AS aup_ln, aup_invln(r) AS aup_invln,
        win_rate(r) AS win_rate,
        100.0 * sum(passed) / sum(seeds) AS pass_rate,
        sum(missing) AS missing
    FROM cells
    GROUP BY model, format, language
)
SELECT model, format, language, competitions, aup, aup_ln, aup_invln, win_rate, pass_rate, missing
FROM (
    SELECT *, 0 AS block FROM per_language
    UNION ALL
    SELECT model, format, 'Avg.' AS language, 1000 AS position, sum(competitions) AS competitions,
        stable_avg(aup) AS aup, stable_avg(aup_ln) AS aup_ln, stable_avg(aup_invln) AS aup_invln,
        stable_avg(win_rate) AS win_rate, stable_avg(pass_rate) AS pass_rate,
        sum(missing) AS missing, 1 AS block
    FROM per_language
    GROUP BY model, format
) t
ORDER BY model, format, block, position, language
