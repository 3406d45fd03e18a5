-- calls_method: Lua 5.4 twin of bench/calls/calls_method.mn: a loop of method
-- calls (obj:step(x), the function read from the object's field).
local function counter(k)
  return { step = function(self, x) return x + self.k end, k = k }
end

local function run(obj, n)
  local acc = 0
  for _ = 1, n do acc = obj:step(acc) end
  return acc
end

print("checksum: " .. run(counter(3), tonumber(arg[1]) or 30000000))
