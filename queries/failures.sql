-- The failure taxonomy per model and language: runs by execute outcome (ok,
-- syntax_error, import_error, missing_function, signature_mismatch, runtime_error,
-- timeout, out_of_memory, bad_predictions, constraint_violation, not_executed), and how
-- many of them graded valid.
SELECT model, format, language, outcome, count(*) AS runs,
    sum(CASE WHEN valid THEN 1 ELSE 0 END) AS valid
FROM runs
GROUP BY model, format, language, language_position, outcome
ORDER BY model, format, language_position, outcome
