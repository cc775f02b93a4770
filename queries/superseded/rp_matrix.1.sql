-- The task × language matrix of r per model: one row per cell (the report pivots it
-- into the heat map). r is the cell's mean r_p over seeds, missing seeds counting 0.
SELECT model, format, competition, language, tier, r, runs, passed, seeds
FROM cells
ORDER BY model, format, competition, language_position
