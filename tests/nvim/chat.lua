-- mira.ask through Neovim's own LSP client against the mock provider: the answer must land in
-- the transcript buffer (conversation.md), streamed by workspace/applyEdit, focused by
-- window/showDocument where Neovim advertises it (0.8+).
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

M.run(function()
  local v = vim.version()
  M.log('nvim', v.major .. '.' .. v.minor .. '.' .. v.patch)
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  local transcript = assert(os.getenv('MIRA_HOME')) .. '/conversation.md'
  local path = root .. '/main.py'
  vim.fn.writefile({ 'def main():', '    print("hi")' }, path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local messages = {}
  local client = M.start(buf, root, {
    handlers = {
      ['window/showMessage'] = function(_, result) table.insert(messages, result.message) end,
    },
  })

  -- The transcript is the one conversation: an earlier run's answers are in it already. They
  -- are counted in the database (the file on disk may lag: the buffer is what Mira edits).
  local function completed(text) return select(2, text:gsub('_completed', '')) end
  local before = 0
  for _, t in ipairs(M.request_sync(client, 'mira/history', { limit = 50 }, buf) or {}) do
    if t.status == 'completed' then before = before + 1 end
  end
  local result = M.request_sync(client, 'workspace/executeCommand', {
    command = 'mira.ask',
    arguments = { { question = 'what is the codeword?', uri = vim.uri_from_bufnr(buf), position = { line = 1, character = 4 } } },
  }, buf)
  assert(type(result) == 'table' and type(result.turn) == 'string', 'mira.ask result: ' .. vim.inspect(result))
  M.log('turn', result.turn)

  local function transcript_text()
    local tb = vim.fn.bufnr(transcript)
    if tb == -1 or not vim.api.nvim_buf_is_loaded(tb) then return '' end
    return table.concat(vim.api.nvim_buf_get_lines(tb, 0, -1, false), '\n')
  end
  M.wait('the answer in the transcript buffer', 20000, function()
    return completed(transcript_text()) > before
  end)
  local text = transcript_text()
  M.log('transcript:\n' .. text)
  assert(text:find('> what is the codeword?', 1, true), 'question missing')
  assert(text:find('The codeword is **pelican**, ünïcode ✓.\n\nIt was chosen in 2019.', 1, true), 'answer missing or garbled')
  local history = M.request_sync(client, 'mira/history', { limit = 50 }, buf)
  assert(select(2, text:gsub('### You', '')) == #history, 'one question block per turn')
  M.wait('showMessage', 5000, function()
    for _, m in ipairs(messages) do if m:find('Mira answered', 1, true) then return true end end
    return false
  end)
  if M.new then
    -- showDocument is advertised from 0.8: the transcript is the current buffer now.
    assert(vim.api.nvim_buf_get_name(0) == transcript, 'showDocument did not focus the transcript: ' .. vim.api.nvim_buf_get_name(0))
  end

  -- The history request sees the same exchange.
  local last = history[#history]
  assert(last.turn == result.turn and last.entries[2].text:find('pelican', 1, true), vim.inspect(last))
end)
