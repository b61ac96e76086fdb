-- Mira for Neovim's built-in LSP client (0.7+; 0.8+ recommended).
--   require('mira').setup({})            -- attach to every file buffer
--   require('mira').setup({ filetypes = { 'rust', 'python' } })
-- Commands: :MiraAsk {question}, :MiraEdit {instruction}, :MiraRemember {text},
-- :MiraRecall {query}, :MiraForget {id}, :MiraStatus, :MiraCancel, :MiraConversation, :MiraReindex
local M = {}

M.defaults = {
  cmd = { 'mira', 'lsp' },
  -- nil: every buffer backed by a file; or a list of filetypes
  filetypes = nil,
  root_markers = { '.mira', '.git', 'Cargo.toml', 'package.json', 'pyproject.toml', 'go.mod' },
  -- sent as initializationOptions.mira (same keys as ~/.config/mira/config.toml)
  settings = { notifications = true },
}

local new_api = vim.fn.has('nvim-0.11') == 1

local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. m) then return dir end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then break end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function client()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get()) do
    if c.name == 'mira' then return c end
  end
end

function M.attach(buf, opts)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' or vim.bo[buf].buftype ~= '' then return end
  local config = {
    name = 'mira',
    cmd = opts.cmd,
    root_dir = find_root(name, opts.root_markers),
    init_options = { mira = opts.settings },
    capabilities = vim.lsp.protocol.make_client_capabilities(),
  }
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = buf })
  end
  -- 0.7: one client per root, reused across buffers
  M._ids = M._ids or {}
  local id = M._ids[config.root_dir]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    M._ids[config.root_dir] = id
  end
  vim.lsp.buf_attach_client(buf, id)
  return id
end

--- Run a Mira command; `on_result(result)` gets what the server answered.
function M.execute(command, args, on_result)
  local c = client()
  if not c then
    vim.notify('Mira is not running in this Neovim (open a file first)', vim.log.levels.WARN)
    return
  end
  local params = { command = command, arguments = args or {} }
  local handler = function(err, result)
    if err then
      vim.notify('Mira: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end
  if new_api then c:request('workspace/executeCommand', params, handler)
  else c.request('workspace/executeCommand', params, handler) end
end

local function focus()
  local buf = vim.api.nvim_get_current_buf()
  local pos = vim.api.nvim_win_get_cursor(0)
  return { uri = vim.uri_from_bufnr(buf), position = { line = pos[1] - 1, character = pos[2] } }
end

function M.setup(opts)
  opts = vim.tbl_deep_extend('force', M.defaults, opts or {})
  local group = vim.api.nvim_create_augroup('mira', { clear = true })
  vim.api.nvim_create_autocmd(opts.filetypes and 'FileType' or 'BufReadPost', {
    group = group,
    pattern = opts.filetypes or '*',
    callback = function(ev) M.attach(ev.buf, opts) end,
  })
  local cmd = vim.api.nvim_create_user_command
  cmd('MiraAsk', function(a)
    local f = focus()
    M.execute('mira.ask', { { question = a.args, uri = f.uri, position = f.position } })
  end, { nargs = '+', desc = 'Ask Mira (global conversation, with this buffer as context)' })
  cmd('MiraEdit', function(a)
    local f = focus()
    M.execute('mira.edit', { { instruction = a.args, uri = f.uri } })
  end, { nargs = '+', desc = 'Ask Mira to edit this buffer' })
  cmd('MiraRemember', function(a) M.execute('mira.remember', { a.args }, function(r)
    vim.notify('Mira remembered: ' .. vim.inspect(r))
  end) end, { nargs = '+' })
  cmd('MiraRecall', function(a) M.execute('mira.recall', { a.args }, function(r)
    vim.notify(vim.inspect(r))
  end) end, { nargs = '+' })
  cmd('MiraForget', function(a) M.execute('mira.forget', { a.args }) end, { nargs = 1 })
  cmd('MiraStatus', function() M.execute('mira.status', {}, function(r)
    vim.notify(vim.inspect(r))
  end) end, {})
  cmd('MiraCancel', function() M.execute('mira.cancel', {}) end, {})
  cmd('MiraConversation', function() M.execute('mira.openConversation', {}) end, {})
  cmd('MiraReindex', function() M.execute('mira.reindex', {}) end, {})
  -- Buffers already open when setup runs (e.g. `nvim file` with lazy loading).
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local ft = vim.bo[buf].filetype
      if not opts.filetypes or vim.tbl_contains(opts.filetypes, ft) then M.attach(buf, opts) end
    end
  end
end

return M
