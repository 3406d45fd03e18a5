-- string_build: idiomatic Lua 5.4 twin of bench/programs/string_build.mn (same
-- algorithm, same output). Each line is one `..` chain (Lua concatenates it in
-- one step), the buffer a table joined by table.concat; the 3,000-digit line is
-- grown by `..` one digit at a time: that quadratic copying is the workload the
-- program exists to measure, so it is kept.
-- (bench/lua/string_build.lua is the identical-work twin: its `..` chains are
-- parenthesised so that every intermediate string is built, as Minnow's `++` does.)
local P = 1000000007

local n = tonumber(arg[1]) or 20000
local reps = tonumber(arg[2]) or 20
local total = 0
for r = 0, reps - 1 do
  local b = {}
  for i = 0, n - 1 do
    b[i + 1] = "key" .. i .. "=" .. (i * 7 + r) % 1000 .. ";"
  end
  local text = table.concat(b)
  local line = ""
  for j = 0, 2999 do line = line .. (j + r) % 10 end
  local tl, ll = #text, #line
  total = (total * 31 + tl + text:byte(tl // 2 + 1) + ll + line:byte(r + 1)) % P
end
print("checksum: " .. total)
