-- The plugin brings a dead server back (issue 20): kill -9 `mira lsp`, see one message, a new
-- process attached to the same buffer, and requests answered again.
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

M.run(function()
  local repo = assert(os.getenv('MIRA_REPO'))
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  vim.opt.runtimepath:append(repo .. '/editors/nvim')
  local notes = {}
  vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
  local mira = require('mira')
  mira.setup({ cmd = { os.getenv('MIRA_BIN'), 'lsp' } })
  vim.fn.writefile({ 'fn area() {}', 'fn main() { area(); }' }, root .. '/src.rs')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/src.rs'))
  local function status()
    local got
    mira.execute('mira.status', {}, function(r) got = r end)
    vim.wait(10000, function() return got ~= nil end, 10)
    return got
  end
  M.wait('mira attached', 15000, function()
    local c = mira.client()
    return c and c.initialized
  end)
  local first = assert(status(), 'mira.status answered').pid
  assert(type(first) == 'number', 'status carries the pid')

  assert(vim.loop.kill(first, 'sigkill') == 0, 'kill -9 the server')
  M.wait('the death noticed', 10000, function() return mira.client() == nil end)
  -- While it is down, a command says what happened instead of "open a file first".
  notes = {}
  mira.execute('mira.status', {})
  local said = notes[1] and notes[1].msg or ''
  assert(said:find('stopped') and (said:find('restarting') or said:find('starting')), 'while down: ' .. said)

  local second
  M.wait('a new server attached', 15000, function()
    local c = mira.client()
    if not (c and c.initialized) then return false end
    local s = status()
    second = s and s.pid
    return second ~= nil and second ~= first and s.openDocuments == 1
  end)
  local stops = 0
  for _, n in ipairs(notes) do
    if n.msg:find('the server stopped %(killed by signal 9%); restarting it') then stops = stops + 1 end
  end
  assert(stops == 1, 'said once, got ' .. vim.inspect(notes))

  -- The buffer is attached to the new process: its symbols are answered.
  local c = mira.client()
  local symbols = M.request_sync(c, 'textDocument/documentSymbol',
    { textDocument = { uri = vim.uri_from_bufnr(0) } }, 0)
  assert(#symbols == 2, 'symbols after the restart: ' .. vim.inspect(symbols))
  M.log('restarted: pid ' .. first .. ' -> ' .. second)
end)
