-- word_count: idiomatic Lua 5.4 twin of bench/programs/word_count.mn (same
-- algorithm, same output). The text's pieces go into a table joined by
-- table.concat, string.gmatch cuts it into words, a table keyed by the words
-- counts them (`counts[w] = (counts[w] or 0) + 1`), pairs folds it.
-- (bench/lua/word_count.lua is the identical-work twin of bench-gc.)
local P = 1000000007
local SYL = { "ka", "lo", "mi", "nu", "pe", "ra", "so", "ti",
              "va", "ze", "bro", "cha", "dru", "fle", "gri", "sha" }

local n = tonumber(arg[1]) or 200000
local seed = 42
local function rand(bound)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed // 65536) % bound
end

local parts = {}
for i = 0, n - 1 do
  if i > 0 then parts[#parts + 1] = " " end
  for _ = 1, 1 + rand(3) do parts[#parts + 1] = SYL[rand(16) + 1] end
end
local text = table.concat(parts)

local counts, words = {}, 0
for w in text:gmatch("%S+") do
  words = words + 1
  counts[w] = (counts[w] or 0) + 1
end

local function word_hash(w)
  local h = 0
  for i = 1, #w do h = (h * 131 + w:byte(i)) % P end
  return h
end

local distinct, sum, best, best_n = 0, 0, "", 0
for w, c in pairs(counts) do
  distinct = distinct + 1
  sum = (sum + word_hash(w) * c) % P
  if c > best_n or (c == best_n and w < best) then best, best_n = w, c end
end
print(("words: %d distinct: %d"):format(words, distinct))
print(("most frequent: %s %d"):format(best, best_n))
print(("checksum: %d"):format(sum))
