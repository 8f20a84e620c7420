-- The page around a random stored id (a jump to a message), newest first.
init = function(args) init_ids(args) end

request = function()
  return wrk.format("GET", "/api/messages?order=desc&limit=50&around=" .. random_id())
end
