-- agents: the agents' searches per model, agent, competition and language: how many
-- searches, the steps they used, the validations they ran, how often a step failed, the
-- best validation score and how many searches submitted, for `aide` and `react` alike.
--
-- Grain: (model, agent, competition, language), over seeds and formats; the competition is
-- part of it because validation scores of different metrics do not combine. `aide` rows
-- come from the `journal` log (a step is an attempt, and every attempt is a validation:
-- the static checks and a run on the validation split), `react` rows from the
-- `trajectory` log (a step is a model turn and its tool call; a validation is a
-- `validate` call). A search is a generate unit (`search` = generate.unit_key); where a
-- log holds several events for one (search, step), the latest wins, as in runs.
--   searches      searches
--   mean_steps    steps per search, averaged over the searches
--   validations   validations, all searches together
--   failed_share  failed steps / steps. aide: buggy attempts (failed trials); react:
--                 steps whose observation is an error (a failed run or validation, bad
--                 arguments, an unknown tool, a refused path, a turn without a call)
--   best_score    the best validation score of any search (in the metric's direction);
--                 null when none scored
--   submitted     searches that submitted. react: a `submit` call succeeded (a search
--                 that ends on a budget submits nothing itself); aide: an attempt was good
--                 (AIDE submits its best good attempt; without one it has no best node)
-- A search's steps are committed before its generate event, so the generate log's head,
-- which analyze keys its tables on, moves whenever these logs do.
WITH aide_steps AS (
    SELECT search, step,
        last_value(model ORDER BY created_at, event_id) AS model,
        last_value(competition ORDER BY created_at, event_id) AS competition,
        last_value(language ORDER BY created_at, event_id) AS language,
        last_value(CAST(is_buggy AS TINYINT) ORDER BY created_at, event_id) AS failed,
        last_value(metric ORDER BY created_at, event_id) AS score
    FROM journal
    GROUP BY search, step
), react_steps AS (
    SELECT search, step,
        last_value(model ORDER BY created_at, event_id) AS model,
        last_value(competition ORDER BY created_at, event_id) AS competition,
        last_value(language ORDER BY created_at, event_id) AS language,
        last_value(tool ORDER BY created_at, event_id) AS tool,
        last_value(CAST(is_error AS TINYINT) ORDER BY created_at, event_id) AS failed,
        last_value(validation_score ORDER BY created_at, event_id) AS score,
        last_value(CAST(submitted AS TINYINT) ORDER BY created_at, event_id) AS submitted
    FROM trajectory
    GROUP BY search, step
), steps AS (
    SELECT 'aide' AS agent, model, competition, language, search,
        1 AS validation, CAST(failed AS BIGINT) AS failed,
        CASE WHEN failed = 0 THEN score END AS score,
        CASE WHEN failed = 0 AND score IS NOT NULL THEN 1 ELSE 0 END AS submits
    FROM aide_steps
    UNION ALL
    SELECT 'react', model, competition, language, search,
        CASE WHEN tool = 'validate' THEN 1 ELSE 0 END, CAST(failed AS BIGINT),
        score, CAST(submitted AS BIGINT)
    FROM react_steps
), searches AS (
    SELECT agent, model, competition, language, search,
        count(*) AS steps, sum(validation) AS validations, sum(failed) AS failed,
        max(score) AS max_score, min(score) AS min_score, max(submits) AS submitted
    FROM steps
    GROUP BY agent, model, competition, language, search
)
SELECT s.model, s.agent, s.competition, s.language,
    count(*) AS searches,
    stable_avg(CAST(s.steps AS DOUBLE)) AS mean_steps,
    sum(s.validations) AS validations,
    CAST(sum(s.failed) AS DOUBLE) / CAST(sum(s.steps) AS DOUBLE) AS failed_share,
    CASE WHEN c.direction = 'minimize' THEN min(s.min_score) ELSE max(s.max_score) END
        AS best_score,
    sum(s.submitted) AS submitted
FROM searches s
LEFT JOIN competitions c ON c.id = s.competition
LEFT JOIN languages l ON l.code = s.language
GROUP BY s.model, s.agent, s.competition, s.language, c.direction, l.position
ORDER BY s.model, s.agent, s.competition, l.position
