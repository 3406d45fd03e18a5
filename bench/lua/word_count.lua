-- word_count: Lua 5.4 twin of bench/programs/word_count.mn (same algorithm, same output).
-- Builds pseudo-random text from syllables in a buffer, splits it on spaces and
-- counts word frequencies in a hash table.
local P = 1000000007
local SYL = { "ka", "lo", "mi", "nu", "pe", "ra", "so", "ti",
              "va", "ze", "bro", "cha", "dru", "fle", "gri", "sha" }

local n = tonumber(arg[1]) or 200000
local seed = 42
local function rand(bound)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed // 65536) % bound
end

local buf = {}
for i = 0, n - 1 do
  if i > 0 then buf[#buf + 1] = " " end
  local nsyl = 1 + rand(3)
  for _ = 1, nsyl do buf[#buf + 1] = SYL[rand(16) + 1] end
end
local text = table.concat(buf)

local counts = {}
local words = 0
for w in string.gmatch(text, "[^ ]+") do
  words = words + 1
  counts[w] = (counts[w] or 0) + 1
end

local function word_hash(w)
  local h = 0
  for i = 1, #w do h = (h * 131 + string.byte(w, i)) % P end
  return h
end

local distinct, sum, best, best_n = 0, 0, "", 0
for w, c in pairs(counts) do
  distinct = distinct + 1
  sum = (sum + word_hash(w) * c) % P
  if c > best_n or (c == best_n and w < best) then best, best_n = w, c end
end
print("words: " .. words .. " distinct: " .. distinct)
print("most frequent: " .. best .. " " .. best_n)
print("checksum: " .. sum)
