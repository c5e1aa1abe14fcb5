-- wrk script for Benchmarks/run: cycles through the fixture's tile paths (one per line in the
-- file named by WRK_PATHS), each wrk thread starting at its own offset. Writes nothing.
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do
  if #line > 0 then paths[#paths + 1] = line end
end

local counter = 0
function setup(thread)
  thread:set("offset", counter * 7919)
  counter = counter + 1
end

local i = nil
function request()
  if i == nil then i = (offset or 0) % #paths end
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
