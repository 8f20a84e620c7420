-- A history page: the 50 messages before a random stored id, newest first.
init = function(args) init_ids(args) end

request = function()
  return wrk.format("GET", "/api/messages?order=desc&limit=50&before=" .. random_id())
end
