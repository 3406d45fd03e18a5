-- deep_map: Lua 5.4 twin of bench/programs/deep_map.mn (same algorithm, same output).
-- Non-tail-recursive map over a long cons list with a function that allocates
-- tuples (tables here); the previous result stays alive for one round.
local P = 1000000007

local function rev(l)
  local r = nil
  while l ~= nil do r = { l[1], r }; l = l[2] end
  return r
end

-- Like Minnow's List.init: build reversed, then rev.
local function init(n, f)
  local acc = nil
  for i = 0, n - 1 do acc = { f(i), acc } end
  return rev(acc)
end

local function map(f, l)
  if l == nil then return nil end
  local h = f(l[1])
  return { h, map(f, l[2]) }
end

local function fold_left(f, acc, l)
  while l ~= nil do acc = f(acc, l[1]); l = l[2] end
  return acc
end

local n = tonumber(arg[1]) or 10000
local reps = tonumber(arg[2]) or 300
local xs = init(n, function(i) return i end)
local prev = nil
local total = 0
for r = 0, reps - 1 do
  local ys = map(function(x) return { x, { x + r, x * 2 } } end, xs)
  local s = fold_left(function(acc, t) return (acc + t[1] + t[2][1]) % P end, 0, ys)
  if prev ~= nil then s = (s + prev[1][2][1]) % P end
  total = (total * 31 + s) % P
  prev = ys
end
print("checksum: " .. total)
