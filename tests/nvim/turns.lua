-- Three answers through the plugin exactly as its README sets it up (Neovim's default 150 ms
-- didChange debounce): each answer lands once, nothing echoes per streamed edit, no hit-enter
-- prompt, and a plain :qa quits afterwards (issue 30).
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

M.run(function()
  local repo = assert(os.getenv('MIRA_REPO'))
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  local transcript = assert(os.getenv('MIRA_HOME')) .. '/conversation.md'
  vim.opt.runtimepath:append(repo .. '/editors/nvim')
  local mira = require('mira')
  mira.setup({ cmd = { os.getenv('MIRA_BIN'), 'lsp' } })
  vim.fn.writefile({ 'def main():', '    print("hi")' }, root .. '/main.py')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/main.py'))
  M.wait('mira attached', 15000, function()
    local c = mira.client()
    return c and c.initialized
  end)
  local function text()
    local tb = vim.fn.bufnr(transcript)
    if tb == -1 or not vim.api.nvim_buf_is_loaded(tb) then return '' end
    return table.concat(vim.api.nvim_buf_get_lines(tb, 0, -1, false), '\n')
  end
  local function count(s, needle) return select(2, s:gsub(vim.pesc(needle), '')) end
  -- Every Neovim under test shares one database: count the turns before this run's.
  local prior = #M.request_sync(mira.client(), 'mira/history', { limit = 50 }, 0)
  for i = 1, 3 do
    vim.cmd('MiraAsk question number ' .. i)
    M.wait('answer ' .. i, 20000, function() return count(text(), '_completed') >= prior + i end)
  end
  vim.wait(500) -- anything sent twice would have arrived by now
  -- Every Neovim under test shares one database: earlier runs' turns come first.
  local full = text()
  local from = 1
  while true do
    local at = full:find('> question number 1', from, true)
    if not at then break end
    from = at + 1
  end
  local t = full:sub(from - 1)
  M.log('this run\'s part of the transcript:\n' .. t)
  for i = 1, 3 do
    assert(count(t, 'Answer ' .. i .. ' begins.') == 1, 'answer ' .. i .. ' shown ' .. count(t, 'Answer ' .. i .. ' begins.') .. ' times')
    assert(count(t, 'Answer ' .. i .. ' ends.') == 1, 'answer ' .. i .. ' tail shown twice')
    local whole = 'Answer ' .. i .. ' begins.\n\nA middle paragraph, long enough to be its own chunk.\n\nAnswer ' .. i .. ' ends.'
    assert(t:find(whole, 1, true), 'answer ' .. i .. ' is not one contiguous text')
  end
  assert(count(t, '> question number') == 3, 'three questions, each once')
  local disk = table.concat(vim.fn.readfile(transcript), '\n')
  assert(disk == full, 'the transcript on disk is what the buffer shows')
  local messages = vim.fn.execute('messages')
  M.log('messages:\n' .. messages)
  assert(not messages:find('Workspace edit', 1, true), 'an applyEdit label was echoed')
  assert(not messages:find('newer than edits', 1, true), 'a stale edit was dropped')
  io.stderr:write('PASS (quitting with a plain :qa)\n')
  vim.cmd('qa')
end)
