-- list_pipeline: idiomatic Lua 5.4 twin of bench/programs/list_pipeline.mn (same
-- algorithm, same output). Lists are Lua arrays (sequences); map, filter and
-- fold_left are loops over them, called with fresh closures each round.
-- (bench/lua/list_pipeline.lua is the identical-work twin: cons cells, recursive map.)
local P = 1000000007

local function map(f, t)
  local r = {}
  for i = 1, #t do r[i] = f(t[i]) end
  return r
end

local function filter(p, t)
  local r, n = {}, 0
  for i = 1, #t do
    local x = t[i]
    if p(x) then n = n + 1; r[n] = x end
  end
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
local total = 0
for r = 0, reps - 1 do
  local ys = map(function(x) return x * 3 + r end, xs)
  local zs = filter(function(x) return x % 2 == 0 end, ys)
  local ws = map(function(x) return x // 2 + 1 end, zs)
  local s = fold_left(function(acc, x) return (acc + x) % P end, 0, ws)
  total = (total * 31 + s) % P
end
print("checksum: " .. total)
