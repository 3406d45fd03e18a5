-- calls_loop: Lua 5.4 twin of bench/calls/calls_loop.mn: a loop of calls to a
-- small function (a local function, as a Lua programmer writes it).
local function step(x) return x + 3 end

local function run(n)
  local acc = 0
  for _ = 1, n do acc = step(acc) end
  return acc
end

print("checksum: " .. run(tonumber(arg[1]) or 50000000))
