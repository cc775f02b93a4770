-- Cross-lingual variance of r per task and model, split within versus between resource
-- tiers: var_total = var_within + var_between (definitions in views/task_variance.sql).
SELECT model, format, competition, languages, mean_r, var_total, var_within, var_between
FROM task_variance
ORDER BY model, format, competition
