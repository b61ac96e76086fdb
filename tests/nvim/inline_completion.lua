-- Inline completion through the plugin: with a `[completion]` provider in its settings, the
-- plugin turns on Neovim's ghost text (`vim.lsp.inline_completion.enable`, 0.12+) for the
-- buffer and client once Mira advertises it, and the request answers from the provider.
-- Neovim before 0.12 has no such API: a stand-in records the call the plugin makes (without
-- one, the plugin draws the ghost text itself: tests/it/nvim_tui.rs).
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

M.run(function()
  local repo = assert(os.getenv('MIRA_REPO'))
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  vim.opt.runtimepath:append(repo .. '/editors/nvim')
  local calls = {}
  local real = vim.lsp.inline_completion
  if real and real.enable then
    local enable = real.enable
    real.enable = function(on, filter)
      table.insert(calls, { on = on, filter = filter })
      return enable(on, filter)
    end
  else
    vim.lsp.inline_completion = {
      enable = function(on, filter) table.insert(calls, { on = on, filter = filter }) end,
    }
  end
  local mira = require('mira')
  mira.setup({
    cmd = { os.getenv('MIRA_BIN'), 'lsp' },
    settings = {
      completion = {
        provider = 'openai-completions',
        base_url = assert(os.getenv('MIRA_FIM_URL')),
        debounce_ms = 0,
      },
    },
  })
  vim.fn.writefile({ 'fn main() {', '    let total = compute(', '}' }, root .. '/main.rs')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/main.rs'))
  local buf = vim.api.nvim_get_current_buf()
  M.wait('mira attached', 15000, function()
    local c = mira.client()
    return c and c.initialized
  end)
  local c = mira.client()
  assert(c.server_capabilities.inlineCompletionProvider, 'inlineCompletionProvider advertised')
  M.wait('ghost text enabled', 10000, function() return #calls > 0 end)
  assert(calls[1].on == true, 'enabled')
  assert(calls[1].filter.bufnr == buf, 'for the buffer: ' .. vim.inspect(calls[1].filter))
  assert(calls[1].filter.client_id == c.id, 'for Mira: ' .. vim.inspect(calls[1].filter))
  local r = M.request_sync(c, 'textDocument/inlineCompletion', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 1, character = 24 },
    context = { triggerKind = 1 },
  }, buf)
  assert(r.items[1].insertText == '1, 2);', vim.inspect(r))
end)
