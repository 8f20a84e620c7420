-- Shared by the scenarios that pick stored ids: loads the id list named after `--`.
ids = {}

local function load_ids(path)
  local file = assert(io.open(path, "r"), "cannot open id list " .. tostring(path))
  for line in file:lines() do
    if #line > 0 then ids[#ids + 1] = line end
  end
  file:close()
  assert(#ids > 0, "empty id list " .. path)
end

local seeded = false
function init_ids(args)
  load_ids(args[1])
  if not seeded then
    math.randomseed(os.time() + (tonumber(args[2]) or 0))
    seeded = true
  end
end

function random_id()
  return ids[math.random(#ids)]
end
