-- Shared helpers for Mira's headless Neovim tests (0.7.2 and 0.11.x).
-- Every script: `local M = dofile(os.getenv('MIRA_NVIM_LIB'))`, then M.run(function() ... end).
local M = {}

local T0 = vim.loop.hrtime()
function M.log(...)
  local ms = math.floor((vim.loop.hrtime() - T0) / 1e6)
  io.stderr:write(string.format('[%6dms] ', ms) .. table.concat(vim.tbl_map(tostring, { ... }), ' ') .. '\n')
end

M.new = vim.fn.has('nvim-0.11') == 1

-- The step under way, named in the log when the script runs out of time.
M.step = 'start'

function M.wait(what, timeout, cond)
  M.step = what
  local t = vim.loop.hrtime()
  if not vim.wait(timeout, cond, 10) then error('timed out waiting for ' .. what, 0) end
  local ms = math.floor((vim.loop.hrtime() - t) / 1e6)
  if ms > 1000 then M.log(string.format('%s took %d ms', what, ms)) end
end

-- Start `mira lsp` for a buffer; returns the client.
function M.start(buf, root, extra)
  local config = vim.tbl_extend('force', {
    name = 'mira',
    cmd = { assert(os.getenv('MIRA_BIN'), 'MIRA_BIN not set'), 'lsp' },
    root_dir = root,
    capabilities = vim.lsp.protocol.make_client_capabilities(),
    flags = { debounce_text_changes = 0, allow_incremental_sync = true },
  }, extra or {})
  local id
  if vim.lsp.start then
    id = vim.lsp.start(config, { bufnr = buf })
  else
    id = vim.lsp.start_client(config)
    assert(vim.lsp.buf_attach_client(buf, id), 'buf_attach_client failed')
  end
  assert(id, 'failed to start mira')
  local client = vim.lsp.get_client_by_id(id)
  M.wait('initialize', 15000, function() return client.initialized == true end)
  return client
end

function M.request_sync(client, method, params, buf)
  local resp, err
  if M.new then
    resp, err = client:request_sync(method, params, 10000, buf)
  else
    resp, err = client.request_sync(method, params, 10000, buf)
  end
  if not resp then error(method .. ' failed: ' .. tostring(err), 0) end
  if resp.err then error(method .. ' error: ' .. vim.inspect(resp.err), 0) end
  return resp.result
end

function M.stop_all()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get()) do
    if M.new then c:stop(true) else c.stop(true) end
  end
end

-- The runner kills Neovim at 120 s; fail first, saying which step was running, so a stall
-- anywhere (a wait inside a wait, a request without a timeout) names itself.
local function deadline(ms)
  local timer = vim.loop.new_timer()
  timer:start(ms, 0, vim.schedule_wrap(function()
    M.log('FAIL: still running after ' .. ms .. ' ms, in step: ' .. M.step)
    io.stderr:flush()
    vim.cmd('cquit 1')
  end))
  return timer
end

function M.run(body)
  local timer = deadline(100000)
  local ok, err = xpcall(body, debug.traceback)
  timer:stop()
  M.log(ok and 'PASS' or ('FAIL: ' .. tostring(err)))
  io.stderr:flush()
  pcall(M.stop_all)
  if ok then vim.cmd('qall!') else vim.cmd('cquit 1') end
end

return M
