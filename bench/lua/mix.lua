-- 90/10 read/write: 9 in 10 requests GET a random stored message, 1 in 10 creates one.
init = function(args) init_ids(args) end

local post_headers = { ["Content-Type"] = "application/json" }
local post_body = '{"author":"bench","room":"general","content":"Hello from the benchmark: a chat message of a typical length."}'

request = function()
  if math.random(10) == 1 then
    return wrk.format("POST", "/api/messages", post_headers, post_body)
  end
  return wrk.format("GET", "/api/messages/" .. random_id())
end
