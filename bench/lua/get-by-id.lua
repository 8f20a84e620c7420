-- GET /api/messages/{id} with an id picked at random from the stored ones.
init = function(args) init_ids(args) end

request = function()
  return wrk.format("GET", "/api/messages/" .. random_id())
end
