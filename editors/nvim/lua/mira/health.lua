-- :checkhealth mira — the binary, its version, the attached server, provider and database.
local M = {}

local health = vim.health or require('health')
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local err = health.error or health.report_error
local info = health.info or health.report_info

local function status_sync(client)
  local params = { command = 'mira.status', arguments = {} }
  local resp
  if vim.fn.has('nvim-0.11') == 1 then
    resp = client:request_sync('workspace/executeCommand', params, 3000)
  else
    resp = client.request_sync('workspace/executeCommand', params, 3000)
  end
  if not resp then return nil, 'no answer within 3 s' end
  if resp.err then return nil, resp.err.message end
  return resp.result
end

function M.check()
  local mira = require('mira')
  start('mira')
  local cmd = (mira.options and mira.options.cmd) or mira.defaults.cmd
  local bin = cmd[1]
  if vim.fn.executable(bin) == 1 then
    ok('binary: ' .. vim.fn.exepath(bin))
    local version = vim.fn.system({ bin, '--version' })
    if vim.v.shell_error == 0 then
      ok('version: ' .. vim.trim(version))
    else
      err('`' .. bin .. ' --version` failed: ' .. vim.trim(version))
    end
  else
    err('`' .. bin .. '` is not executable', {
      'Install it: cargo install --path . (in the mira repository)',
      "or set require('mira').setup({ cmd = { '/path/to/mira', 'lsp' } })",
    })
    return
  end
  local client = mira.client()
  if not client then
    warn('no Mira server is attached', { 'Open a file in a project: the plugin attaches on BufReadPost' })
    return
  end
  ok('server attached (client ' .. client.id .. ', root ' .. tostring(client.config.root_dir) .. ')')
  local status, why = status_sync(client)
  if not status then
    err('mira.status failed: ' .. tostring(why))
    return
  end
  if status.provider and status.provider ~= vim.NIL then
    ok('provider: ' .. status.provider)
  else
    warn('no model provider configured', {
      'Set OPENAI_API_KEY, ANTHROPIC_API_KEY or DEEPSEEK_API_KEY, or [provider] in ~/.config/mira/config.toml',
    })
  end
  if status.database and status.database ~= vim.NIL then
    ok('database: ' .. status.database)
  else
    err('database unavailable: ' .. tostring(status.storeError), { 'Run `mira doctor` in a terminal' })
  end
  if status.index and status.index ~= vim.NIL then
    info(string.format('index: %d files, %d symbols%s', status.index.files, status.index.symbols,
      status.index.ready and '' or ' (indexing…)'))
  end
end

return M
