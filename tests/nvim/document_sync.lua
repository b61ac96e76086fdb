-- Edit a buffer with multi-byte text through normal-mode commands and nvim_buf_set_text;
-- after every step Mira's mira/documentState must equal the buffer, version included.
local M = dofile(assert(os.getenv('MIRA_NVIM_LIB')))

M.run(function()
  local v = vim.version()
  M.log('nvim', v.major .. '.' .. v.minor .. '.' .. v.patch)
  local root = assert(os.getenv('MIRA_TEST_PROJECT'))
  local path = root .. '/sample.txt'
  vim.fn.writefile({ 'hello 😀 wörld', '日本語 e\204\129 🇫🇷 end', 'third line', 'fourth' }, path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local client = M.start(buf, root)
  local uri = vim.uri_from_bufnr(buf)

  local expected_enc = M.new and 'utf-8' or 'utf-16'
  assert(client.offset_encoding == expected_enc,
    'negotiated ' .. tostring(client.offset_encoding) .. ', expected ' .. expected_enc)
  M.log('encoding', client.offset_encoding)

  local steps = 0
  local lost_eol = false
  local function check(label)
    steps = steps + 1
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local want = table.concat(lines, '\n') .. '\n'
    -- Neovim's incremental sync removes the final newline together with the last line
    -- (`ggVGd`) and never sends it back: from then on its own model of the document has
    -- no trailing newline, and Mira must follow the client's edits exactly.
    if lost_eol then want = table.concat(lines, '\n') end
    local got = M.request_sync(client, 'mira/documentState', { uri = uri }, buf)
    if got.text ~= want then
      error(string.format('%s: mismatch\n mira: %q\n nvim: %q', label, got.text, want), 0)
    end
    local version = vim.lsp.util.buf_versions[buf]
    if version and got.version ~= version then
      error(string.format('%s: version %s, buffer %s', label, got.version, version), 0)
    end
  end

  M.wait('didOpen', 5000, function()
    local ok = pcall(M.request_sync, client, 'mira/documentState', { uri = uri }, buf)
    return ok
  end)
  check('open')
  vim.cmd('normal! gg$a🚀!')            check('append emoji at end of line 1')
  vim.cmd('normal! gg0f😀x')            check('delete the emoji')
  vim.cmd('normal! 2G0dw')              check('delete a CJK word')
  vim.cmd('normal! 2G0fex')             check('delete e, leaving a lone combining mark')
  vim.cmd('normal! 2G$F🇫x')            check('delete half a flag')
  vim.cmd('normal! Gonew 🇯🇵 line')     check('open a line with a flag')
  vim.cmd('normal! ggJ')                check('join lines')
  vim.cmd('normal! 3Gdd')               check('delete a line')
  vim.cmd('normal! gg0cwΩμέγα')         check('change a word to Greek')
  vim.api.nvim_buf_set_text(buf, 0, 0, 0, 0, { '新しい', '行 ' })
  check('set_text: multi-line insert at 0,0')
  local first = vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1]
  vim.api.nvim_buf_set_text(buf, 1, 0, 1, #first, { 'replaced 🎉' })
  check('set_text: replace a whole line by byte range')
  vim.api.nvim_buf_set_text(buf, 0, 0, 2, 0, { '' })
  check('set_text: delete across lines')
  vim.cmd('normal! u')                  check('undo')
  vim.cmd('redo')                       check('redo')
  for i = 1, 30 do
    vim.cmd('normal! Go' .. i .. ' ☃ 日本 😀')
  end
  check('30 appended lines')
  -- (0.7 only; fixed in later Neovims)
  vim.cmd('normal! ggVGd')              lost_eol = not M.new check('delete everything')
  vim.cmd('normal! ihello again')       check('type into the empty buffer')
  M.log('steps', steps)
end)
