-- Spearman correlation of each task's cross-lingual variance of r with the task's
-- characteristics (number of features, domain-term density), per model, with the
-- two-sided p-value (scipy.stats.spearmanr). rho and p are NULL where scipy gives NaN
-- (fewer than two tasks, or a constant input, e.g. a model whose r never varies).
WITH x AS (
    SELECT v.model, v.format, v.competition, v.var_total,
        CAST(c.features AS DOUBLE) AS features, c.domain_term_density
    FROM task_variance v JOIN competitions c ON c.id = v.competition
)
SELECT model, format, 'features' AS characteristic, count(*) AS competitions,
    spearman_rho(var_total, features) AS rho, spearman_p(var_total, features) AS p_value
FROM x GROUP BY model, format
UNION ALL
SELECT model, format, 'domain_term_density' AS characteristic, count(*) AS competitions,
    spearman_rho(var_total, domain_term_density) AS rho,
    spearman_p(var_total, domain_term_density) AS p_value
FROM x GROUP BY model, format
ORDER BY model, format, characteristic
