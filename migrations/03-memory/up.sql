-- Placeholder so migration ids stay consecutive on the agent branch until the memory branch
-- lands; that branch's up.sql replaces this file when merged.
SELECT 1;
