-- binary_trees: idiomatic Lua 5.4 twin of bench/programs/binary_trees.mn (same
-- algorithm, same output), written as the benchmarks game's Lua programs write it:
-- a node is {left, right}, a leaf the empty table {}.
-- (bench/lua/binary_trees.lua is the identical-work twin: {false, false} leaves.)
local function make(d)
  if d == 0 then return {} end
  d = d - 1
  return { make(d), make(d) }
end

local function check(t)
  local l = t[1]
  if l then return 1 + check(l) + check(t[2]) end
  return 1
end

local n = tonumber(arg[1]) or 16
local min_depth = 4
local max_depth = math.max(min_depth + 2, n)
local total = 0

local stretch = check(make(max_depth + 1))
total = total + stretch
print(string.format("stretch tree of depth %d\t check: %d", max_depth + 1, stretch))

local long_lived = make(max_depth)
for d = min_depth, max_depth, 2 do
  local iters = 1 << (max_depth - d + min_depth)
  local c = 0
  for _ = 1, iters do c = c + check(make(d)) end
  total = total + c
  print(string.format("%d\t trees of depth %d\t check: %d", iters, d, c))
end
local ll = check(long_lived)
total = total + ll
print(string.format("long lived tree of depth %d\t check: %d", max_depth, ll))
print("checksum: " .. total)
