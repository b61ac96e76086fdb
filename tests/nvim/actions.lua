-- Mira's code actions through Neovim's own UI path (vim.lsp.buf.code_action + vim.ui.select
-- and vim.ui.input, stubbed to answer like a user), with the plugin as a user installs it:
-- "Ask Mira about `parse_port`" at a call site streams an answer into the transcript;
-- "remember selection…" anchors a memory that hover shows, and that goes stale when the
-- function body is edited. Ends with :checkhealth mira.
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

local function req(client, method, params, buf)
  return M.request_sync(client, method, params, buf)
end

M.run(function()
  local v = vim.version()
  M.log('nvim', v.major .. '.' .. v.minor .. '.' .. v.patch)
  local repo = assert(os.getenv('MIRA_REPO'))
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  local transcript = assert(os.getenv('MIRA_HOME')) .. '/conversation.md'
  vim.opt.runtimepath:append(repo .. '/editors/nvim')
  local mira = require('mira')
  mira.setup({ cmd = { os.getenv('MIRA_BIN'), 'lsp' } })

  -- A user choosing from menus and typing into prompts.
  local want, offered, chosen = nil, {}, nil
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    local w = want
    if type(want) == 'table' then w = table.remove(want, 1) end
    for i, it in ipairs(items) do
      local title = opts.format_item and opts.format_item(it) or tostring(it)
      table.insert(offered, title)
      if w and title:find(w, 1, true) then
        chosen = title
        return on_choice(it, i)
      end
    end
    on_choice(nil, nil)
  end
  local typed = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(typed, opts.prompt)
    on_confirm('parse_port rejects ports above 65535')
  end

  vim.fn.writefile({
    'def parse_port(text):',
    '    """Parse a TCP port number."""',
    '    value = int(text)',
    '    return value',
  }, root .. '/util.py')
  vim.fn.writefile({
    'from util import parse_port',
    '',
    '',
    'def main():',
    '    port = parse_port("8080")',
    '    print(port)',
  }, root .. '/main.py')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/main.py'))
  local main = vim.api.nvim_get_current_buf()
  local client
  M.wait('mira attached', 15000, function()
    client = mira.client()
    return client ~= nil and client.initialized
  end)

  -- The cold index has util.py once the action is offered at the call site.
  local at_call = { start = { line = 4, character = 11 }, ['end'] = { line = 4, character = 11 } }
  M.wait('the action at the call site', 15000, function()
    local r = req(client, 'textDocument/codeAction', {
      textDocument = { uri = vim.uri_from_bufnr(main) },
      range = at_call,
      context = { diagnostics = {} },
    }, main)
    for _, a in ipairs(r or {}) do
      if a.title == 'Ask Mira about `parse_port`' then return true end
    end
    return false
  end)

  -- 1. Ask Mira about the symbol under the cursor, through the real menu. The transcript is
  -- the one conversation, so it may hold an earlier run's answer: wait for one more.
  local function count_completed(text)
    local n = 0
    for _ in text:gmatch('_completed') do n = n + 1 end
    return n
  end
  -- Counted in the database: the file on disk may lag (the buffer is what Mira edits).
  local before = 0
  for _, t in ipairs(req(client, 'mira/history', { limit = 50 }, main) or {}) do
    if t.status == 'completed' then before = before + 1 end
  end
  vim.api.nvim_win_set_cursor(0, { 5, 11 })
  want = 'Ask Mira about `parse_port`'
  vim.lsp.buf.code_action()
  M.wait('the menu', 10000, function() return chosen ~= nil end)
  M.log('offered:', table.concat(offered, ' | '))
  for _, t in ipairs(offered) do
    assert(not t:find('selection', 1, true), 'selection actions without a selection: ' .. t)
  end
  local function transcript_text()
    local tb = vim.fn.bufnr(transcript)
    if tb == -1 or not vim.api.nvim_buf_is_loaded(tb) then return '' end
    return table.concat(vim.api.nvim_buf_get_lines(tb, 0, -1, false), '\n')
  end
  M.wait('the answer in the transcript', 20000, function()
    return count_completed(transcript_text()) > before
  end)
  local text = transcript_text()
  assert(text:find('Tell me about `parse_port`', 1, true), 'question missing:\n' .. text)
  assert(text:find('parse_port turns text into a port', 1, true), 'answer missing:\n' .. text)
  if M.new then
    -- The plugin shows the transcript in a split and keeps the cursor in the code.
    assert(vim.api.nvim_get_current_buf() == main, 'the cursor left the code window')
    local shown = false
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) == transcript then shown = true end
    end
    assert(shown, 'the transcript is not in a split')
  end

  -- 2. Remember selection… in util.py: the plugin prompts, the memory is anchored.
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/util.py'))
  local util = vim.api.nvim_get_current_buf()
  M.wait('util.py attached', 10000, function()
    return #((vim.lsp.get_clients or vim.lsp.get_active_clients)({ bufnr = util })) > 0
  end)
  want, chosen = 'Mira: remember selection', nil
  if M.new then
    vim.lsp.buf.code_action({ range = { start = { 3, 4 }, ['end'] = { 4, 15 } } })
  else
    vim.lsp.buf.range_code_action(nil, { 3, 4 }, { 4, 15 })
  end
  M.wait('remember selection', 10000, function() return chosen ~= nil end)
  M.log('offered on a selection:', table.concat(offered, ' | '))
  local has = function(t) for _, o in ipairs(offered) do if o:find(t, 1, true) then return true end end end
  assert(has('Mira: explain selection') and has('Mira: edit selection'), 'selection actions missing')
  M.wait('the plugin prompting for the text', 10000, function() return #typed == 1 end)
  local memories
  M.wait('the anchored memory', 10000, function()
    memories = req(client, 'mira/memories', { query = '65535' }, util).memories
    return memories[1] and memories[1].anchors and memories[1].anchors[1] ~= nil
  end)
  local anchor = memories[1].anchors[1].anchor
  assert(anchor.path == 'util.py' and anchor.symbol == 'parse_port', vim.inspect(anchor))

  local function hover()
    local r = req(client, 'textDocument/hover', {
      textDocument = { uri = vim.uri_from_bufnr(util) },
      position = { line = 0, character = 6 },
    }, util)
    return r and r.contents and r.contents.value or ''
  end
  local h = hover()
  assert(h:find('Mira remembers', 1, true) and h:find('65535', 1, true), 'hover:\n' .. h)
  assert(not h:find('stale', 1, true), 'fresh memory shown stale:\n' .. h)

  -- 3. Edit the function body: hover and recall say stale.
  vim.api.nvim_buf_set_lines(util, 2, 3, false, { '    value = int(text.strip())' })
  M.wait('hover says stale', 10000, function() return hover():find('stale', 1, true) ~= nil end)
  -- Recall reads the same flag; once stale it stays stale (a flip back would time out here).
  local recalled
  local ok = pcall(M.wait, 'recall says stale', 10000, function()
    recalled = req(client, 'workspace/executeCommand', {
      command = 'mira.recall', arguments = { { query = '65535' } },
    }, util)
    local a = recalled.memories[1].anchors[1]
    return a.stale_since ~= nil and a.stale_since ~= vim.NIL
  end)
  assert(ok, 'recall: ' .. vim.inspect(recalled and recalled.memories[1]))
  assert(hover():find('stale', 1, true), 'hover no longer says stale:\n' .. hover())
  assert(mira.format_memory(recalled.memories[1]):find('@util.py::parse_port (stale)', 1, true))

  -- The recall picker: choose the memory, then "Open anchor" lands on the code.
  vim.cmd('enew')
  want, chosen = { '65535', 'Open anchor' }, nil
  mira.recall('65535')
  M.wait('the anchored code opened', 10000, function()
    return vim.api.nvim_buf_get_name(0) == root .. '/util.py'
  end)
  assert(vim.fn.getline('.'):find('parse_port', 1, true), 'cursor not on the symbol: ' .. vim.fn.getline('.'))

  -- 4. :checkhealth mira
  vim.cmd('checkhealth mira')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  M.log('checkhealth:\n' .. report)
  assert(report:find('server attached', 1, true), 'checkhealth did not find the server')
  assert(report:find('provider: openai-chat', 1, true), 'checkhealth provider')
  assert(report:find('database: ', 1, true), 'checkhealth database')
  assert(not report:find('ERROR', 1, true), 'checkhealth reported an error')
end)
