-- A room's history page: the 50 messages of a stored message's room before it, newest first.
-- Lines of the list are "<id> <room>" (bench/room-ids.ts).
init = function(args) init_ids(args) end

request = function()
  local id, room = random_id():match("^(%S+) (%S+)$")
  return wrk.format("GET", "/api/messages?room=" .. room .. "&order=desc&limit=50&before=" .. id)
end
