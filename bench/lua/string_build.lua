-- string_build: Lua 5.4 twin of bench/programs/string_build.mn (same algorithm, same output).
-- Concatenations are parenthesised so that Lua, like Minnow's `++`, builds every
-- intermediate string; the buffer is a table joined by table.concat.
local P = 1000000007

local n = tonumber(arg[1]) or 20000
local reps = tonumber(arg[2]) or 20
local total = 0
for r = 0, reps - 1 do
  local b = {}
  for i = 0, n - 1 do
    b[#b + 1] = ((("key" .. tostring(i)) .. "=") .. tostring((i * 7 + r) % 1000)) .. ";"
  end
  local text = table.concat(b)
  local line = ""
  for j = 0, 2999 do line = line .. tostring((j + r) % 10) end
  local tl, ll = #text, #line
  total = (total * 31 + tl + string.byte(text, tl // 2 + 1) + ll + string.byte(line, r + 1)) % P
end
print("checksum: " .. total)
