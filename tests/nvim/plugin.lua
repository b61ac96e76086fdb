-- The Neovim plugin as a user installs it: setup(), open a file, Mira attaches; commands work.
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

M.run(function()
  local repo = assert(os.getenv('MIRA_REPO'))
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  vim.opt.runtimepath:append(repo .. '/editors/nvim')
  local mira = require('mira')
  mira.setup({ cmd = { os.getenv('MIRA_BIN'), 'lsp' } })
  vim.fn.writefile({ 'fn main() {}' }, root .. '/src.rs')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/src.rs'))
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  M.wait('mira attached', 15000, function()
    for _, c in pairs(get()) do
      if c.name == 'mira' and c.initialized then return true end
    end
  end)
  local got
  mira.execute('mira.status', {}, function(r) got = r end)
  M.wait('mira.status answered', 10000, function() return got ~= nil end)
  assert(got.project.root == root, 'project root ' .. tostring(got.project.root))
  assert(got.openDocuments == 1, 'open documents ' .. tostring(got.openDocuments))
  -- a second buffer in the same project reuses the one client
  vim.fn.writefile({ 'x' }, root .. '/other.txt')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/other.txt'))
  local n = 0
  M.wait('second buffer attached', 5000, function()
    n = 0
    for _, c in pairs(get()) do if c.name == 'mira' then n = n + 1 end end
    got = nil
    mira.execute('mira.status', {}, function(r) got = r end)
    return vim.wait(2000, function() return got ~= nil end) and got.openDocuments == 2
  end)
  assert(n == 1, 'expected one Mira client, got ' .. n)
end)
