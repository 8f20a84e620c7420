-- The reaction summaries of one history page alone: each line of the list (after `--`) is the
-- query of one stored page's 50 ids (messageId=..&messageId=..), written by the harness from
-- the store itself, so the summaries' own cost is measured without the page before them.
init = function(args) init_ids(args) end

request = function()
  return wrk.format("GET", "/api/reactions?" .. random_id())
end
