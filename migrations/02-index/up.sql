-- Placeholder on the memory branch only, so migration ids stay consecutive (01, 02, 03)
-- until the index branch lands its real 02-index/up.sql; on merge, take the index branch's file.
SELECT 1;
