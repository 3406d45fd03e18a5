-- deep_map: idiomatic Lua 5.4 twin of bench/programs/deep_map.mn (same algorithm,
-- same output). The list is a Lua array and map a loop; each element's
-- (x, (x + r, x * 2)) is one flat table {x, x + r, x * 2}; the previous round's
-- array stays alive for one round.
-- (bench/lua/deep_map.lua is the identical-work twin: cons cells, nested tables,
-- recursive map.)
local P = 1000000007

local function map(f, t)
  local r = {}
  for i = 1, #t do r[i] = f(t[i]) end
  return r
end

local function fold_left(f, acc, t)
  for i = 1, #t do acc = f(acc, t[i]) end
  return acc
end

local n = tonumber(arg[1]) or 10000
local reps = tonumber(arg[2]) or 300
local xs = {}
for i = 1, n do xs[i] = i - 1 end
local prev = nil
local total = 0
for r = 0, reps - 1 do
  local ys = map(function(x) return { x, x + r, x * 2 } end, xs)
  local s = fold_left(function(acc, t) return (acc + t[1] + t[2]) % P end, 0, ys)
  if prev and prev[1] then s = (s + prev[1][2]) % P end
  total = (total * 31 + s) % P
  prev = ys
end
print("checksum: " .. total)
