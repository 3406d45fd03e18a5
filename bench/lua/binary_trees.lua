-- binary_trees: Lua 5.4 twin of bench/programs/binary_trees.mn (same algorithm, same output).
-- A node is {left, right}; a leaf is {false, false}, like Minnow's (nil, nil) tuple.
local function make(d)
  if d == 0 then return { false, false } end
  return { make(d - 1), make(d - 1) }
end

local function check(t)
  local l = t[1]
  if not l then return 1 end
  return 1 + check(l) + check(t[2])
end

local n = tonumber(arg[1]) or 16
local min_depth = 4
local max_depth = math.max(min_depth + 2, n)
local total = 0

local stretch = check(make(max_depth + 1))
total = total + stretch
print(string.format("stretch tree of depth %d\t check: %d", max_depth + 1, stretch))

local long_lived = make(max_depth)
local d = min_depth
while d <= max_depth do
  local iters = 1
  for _ = 1, max_depth - d + min_depth do iters = iters * 2 end
  local c = 0
  for _ = 1, iters do c = c + check(make(d)) end
  total = total + c
  print(string.format("%d\t trees of depth %d\t check: %d", iters, d, c))
  d = d + 2
end
local ll = check(long_lived)
total = total + ll
print(string.format("long lived tree of depth %d\t check: %d", max_depth, ll))
print("checksum: " .. total)
