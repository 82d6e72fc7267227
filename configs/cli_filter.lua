--[[
slurm-ddp cli_filter: makes `--ddp-nodes=N --ddp-gpus=G` a real resource request.

SPANK options cannot change a job's request, so this filter (CliFilterPlugins=cli_filter/lua,
installed as cli_filter.lua next to slurm.conf) turns them into
  --nodes=N --gpus-per-node=G --ntasks-per-node=G
in sbatch and salloc, and in srun when it creates its own allocation. Inside an existing
allocation srun is left alone: the allocation's shape is fixed, and the plugin checks it, failing
the step with a message when it does not match.

If a site already has a cli_filter.lua, paste this file's functions into it (or call
ddp_pre_submit from its slurm_cli_pre_submit).
--]]

local PLUGIN = "spank_ddp"
local MAX_NODES = 100000
local MAX_GPUS = 64

local function ddp_option(options, name)
  local spank = options["spank"]
  if type(spank) ~= "table" or type(spank[PLUGIN]) ~= "table" then
    return nil
  end
  local value = spank[PLUGIN][name]
  if value == nil or value == "" then
    return nil
  end
  return tostring(value)
end

-- Returns the count, or nil and a message naming the option, the value and what is allowed.
local function parse_count(name, text, max)
  if not string.match(text, "^%d+$") then
    return nil, string.format("--%s=%q is not a whole number; allowed: 1..%d", name, text, max)
  end
  -- Leading zeros are the same number, as the plugin reads it; the length bound keeps tonumber
  -- exact.
  local digits = string.gsub(text, "^0+(%d)", "%1")
  if #digits > 9 then
    return nil, string.format("--%s=%s is out of range; allowed: 1..%d", name, text, max)
  end
  local n = tonumber(digits)
  if n < 1 or n > max then
    return nil, string.format("--%s=%s is out of range; allowed: 1..%d", name, text, max)
  end
  return n
end

-- The value of an option the user gave explicitly, or nil. Indexing `options` also returns Slurm's
-- placeholders for unset options ("1-0" for nodes, "-2" for ntasks-per-node), which differ between
-- releases; the JSON dump lists only the options that were set, so ask it instead.
local function explicit(options, key)
  local given = slurm.json_cli_options(options)
  if not string.find(given, '"' .. key .. '":', 1, true) then
    return nil
  end
  return tostring(options[key])
end

-- GPUs per node asked through --gres (gpu, gpu:N, gpu:TYPE:N, among other GRES, with or
-- without Slurm's "gres/" or "gres:" prefix), or nil when --gres names no GPU.
local function gres_gpus(text)
  local total = nil
  for item in string.gmatch(text, "[^,]+") do
    item = string.gsub(item, "^gres[:/]", "")
    local name, rest = string.match(item, "^([^:]+)(.*)$")
    if name == "gpu" then
      local count = tonumber(string.match(rest, ":(%d+)$") or "1")
      total = (total or 0) + count
    end
  end
  return total
end

-- GPUs per node asked through --gpus-per-node ([gpu:][TYPE:]N, as Slurm keeps it: "gpu:4",
-- "gpu:a100:4"), or nil when it names no count.
local function gpus_per_node_count(text)
  local total = nil
  for item in string.gmatch(text, "[^,]+") do
    item = string.gsub(item, "^gpu:", "")
    local count = string.match(item, "^(%d+)$") or string.match(item, ":(%d+)$")
    if count == nil then return nil end
    total = (total or 0) + tonumber(count)
  end
  return total
end

local function fail(message)
  slurm.log_error("spank_ddp: %s", message)
  return slurm.ERROR
end

function ddp_pre_submit(options, offset)
  local nodes_text = ddp_option(options, "ddp-nodes")
  local gpus_text = ddp_option(options, "ddp-gpus")
  if nodes_text == nil and gpus_text == nil then
    return slurm.SUCCESS
  end
  if options["type"] == "srun" and os.getenv("SLURM_JOB_ID") ~= nil then
    return slurm.SUCCESS
  end

  if nodes_text ~= nil then
    local nodes, err = parse_count("ddp-nodes", nodes_text, MAX_NODES)
    if nodes == nil then return fail(err) end
    local given = explicit(options, "nodes")
    if given ~= nil and given ~= tostring(nodes) and given ~= nodes .. "-" .. nodes then
      return fail(string.format("--ddp-nodes=%d conflicts with --nodes=%s; give only one of them",
                                nodes, given))
    end
    options["nodes"] = tostring(nodes)
  end

  if gpus_text ~= nil then
    local gpus, err = parse_count("ddp-gpus", gpus_text, MAX_GPUS)
    if gpus == nil then return fail(err) end
    local given = explicit(options, "ntasks-per-node")
    if given ~= nil and given ~= tostring(gpus) then
      return fail(string.format(
        "--ddp-gpus=%d (one task per GPU) conflicts with --ntasks-per-node=%s; give only one",
        gpus, given))
    end
    local given_gpus = explicit(options, "gpus-per-node")
    if given_gpus ~= nil and gpus_per_node_count(given_gpus) ~= gpus then
      return fail(string.format("--ddp-gpus=%d conflicts with --gpus-per-node=%s; give only one",
                                gpus, given_gpus))
    end
    -- Any other GPU request beside --ddp-gpus would make the job's GPUs differ from its tasks,
    -- and every step would then fail at creation.
    local given_gres = explicit(options, "gres")
    local gres_count = given_gres and gres_gpus(given_gres)
    if gres_count ~= nil and gres_count ~= gpus then
      -- Slurm keeps --gres=gpu:1 as "gres:gpu:1": show what the user typed.
      local typed = string.gsub(given_gres, "gres[:/]", "")
      return fail(string.format("--ddp-gpus=%d conflicts with --gres=%s; give only one of them",
                                gpus, typed))
    end
    local given_total = explicit(options, "gpus")
    if given_total ~= nil then
      return fail(string.format("--ddp-gpus=%d (GPUs per node) conflicts with --gpus=%s (GPUs per "
                                .. "job); give only --ddp-gpus", gpus, given_total))
    end
    local given_per_task = explicit(options, "gpus-per-task")
    if given_per_task ~= nil and given_per_task ~= "1" and given_per_task ~= "gpu:1" then
      return fail(string.format("--ddp-gpus=%d (one GPU per task) conflicts with --gpus-per-task=%s;"
                                .. " give only --ddp-gpus", gpus, given_per_task))
    end
    -- A matching --gres or --gpus-per-node already asks for the GPUs (of the type it names);
    -- asking twice is Slurm's error to make.
    if gres_count == nil and given_gpus == nil then
      options["gpus-per-node"] = tostring(gpus)
    end
    options["ntasks-per-node"] = tostring(gpus)
  end
  return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
  return ddp_pre_submit(options, offset)
end

function slurm_cli_post_submit(offset, job_id, step_id)
  return slurm.SUCCESS
end
