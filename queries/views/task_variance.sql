-- task_variance: the cross-lingual variance of r per (model, format, competition), split
-- within versus between the languages' resource tiers (high / medium / low).
--
-- With n languages, tier t holding n_t of them with mean m_t, and overall mean m:
--   var_total   = population variance of r over the n languages
--   var_within  = Σ_t (n_t / n) · stable_var_pop(r in t)
--   var_between = Σ_t (n_t / n) · (m_t − m)²
-- so var_total = var_within + var_between exactly (up to rounding).
WITH overall AS (
    SELECT model, format, competition, count(*) AS n, stable_avg(r) AS mean_r, stable_var_pop(r) AS var_total
    FROM cells
    GROUP BY model, format, competition
), tiers AS (
    SELECT model, format, competition, tier, count(*) AS n_t, stable_avg(r) AS mean_t, stable_var_pop(r) AS var_t
    FROM cells
    GROUP BY model, format, competition, tier
)
SELECT o.model, o.format, o.competition, o.n AS languages, o.mean_r, o.var_total,
    stable_sum(t.n_t * t.var_t) / o.n AS var_within,
    stable_sum(t.n_t * (t.mean_t - o.mean_r) * (t.mean_t - o.mean_r)) / o.n AS var_between
FROM overall o
JOIN tiers t ON t.model = o.model AND t.format = o.format AND t.competition = o.competition
GROUP BY o.model, o.format, o.competition, o.n, o.mean_r, o.var_total
