-- Variance within versus between resource tiers per model: the means over tasks of
-- variance_by_task.sql's columns, and the share of the total that lies between tiers
-- (NULL when a model's r never varies across languages).
SELECT model, format, count(*) AS competitions,
    stable_avg(var_total) AS var_total, stable_avg(var_within) AS var_within, stable_avg(var_between) AS var_between,
    CASE WHEN stable_sum(var_total) > 0 THEN stable_sum(var_between) / stable_sum(var_total) END AS between_share
FROM task_variance
GROUP BY model, format
ORDER BY model, format
