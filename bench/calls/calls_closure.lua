-- calls_closure: Lua 5.4 twin of bench/calls/calls_closure.mn: a loop of calls
-- to a closure reading a captured variable (an upvalue).
local function adder(k) return function(x) return x + k end end

local function run(f, n)
  local acc = 0
  for _ = 1, n do acc = f(acc) end
  return acc
end

print("checksum: " .. run(adder(3), tonumber(arg[1]) or 40000000))
