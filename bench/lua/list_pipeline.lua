-- list_pipeline: Lua 5.4 twin of bench/programs/list_pipeline.mn (same algorithm, same output).
-- Lists are cons cells {head, tail} ending in nil, and map is non-tail-recursive,
-- like Minnow's List.map, so both sides allocate the same cells and recurse as deep.
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

-- Like Minnow's List.filter: a loop that conses the kept elements, then rev.
local function filter(p, l)
  local acc = nil
  while l ~= nil do
    local x = l[1]
    if p(x) then acc = { x, acc } end
    l = l[2]
  end
  return rev(acc)
end

local function fold_left(f, acc, l)
  while l ~= nil do acc = f(acc, l[1]); l = l[2] end
  return acc
end

local n = tonumber(arg[1]) or 10000
local reps = tonumber(arg[2]) or 300
local xs = init(n, function(i) return i end)
local total = 0
for r = 0, reps - 1 do
  local ys = map(function(x) return x * 3 + r end, xs)
  local zs = filter(function(x) return x % 2 == 0 end, ys)
  local ws = map(function(x) return x // 2 + 1 end, zs)
  local s = fold_left(function(acc, x) return (acc + x) % P end, 0, ws)
  total = (total * 31 + s) % P
end
print("checksum: " .. total)
