-- calls_fib: Lua 5.4 twin of bench/calls/calls_fib.mn: doubly recursive Fibonacci.
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

print("checksum: " .. fib(tonumber(arg[1]) or 35))
